"""The truth matrix: which cells run, and running them side by side on one cluster and one runtime.

A cell that cannot apply is listed with its reason (the test skips it and says why).
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from sandbox.cluster import SandboxCluster
from tests.e2e.harness import RuntimeThread
from tests.truth.cells import CLIENTS, SCENARIOS, CellSpec
from tests.truth.clients import NotApplicable
from tests.truth.disruptive import OPERATIONS as DISRUPTIVE
from tests.truth.disruptive import run_disruptive
from tests.truth.stage import CellOutcome, Stage
from tests.truth.unclean import run_unclean

RESET_MODES = (
    "to-earliest",
    "to-latest",
    "to-offset",
    "shift-by-back",
    "shift-by-forward",
    "to-datetime",
    "by-duration",
    "from-file",
    "delete",
    "delete-offsets",
)


def catalog() -> list[CellSpec]:
    """Every cell: operations x clients x group kinds, with ``auto.offset.reset`` where it matters."""
    cells: list[CellSpec] = []
    for client in CLIENTS:
        for reset in ("earliest", "latest"):
            cells.append(CellSpec("unclean-election", client, "empty", reset))
            cells.append(CellSpec("retention-delete-records", client, "empty", reset))
        for variant in ("auto-create-on", "auto-create-off"):
            cells.append(CellSpec("topic-deleted", client, "active", variant=variant))
        cells.append(CellSpec("offset-delete-active", client, "active"))
    for i, mode in enumerate(RESET_MODES):
        client = CLIENTS[i % len(CLIENTS)]
        cells.append(CellSpec("reset-offsets", client, "empty", variant=mode))
    for i, mode in enumerate(("to-earliest", "to-latest", "shift-by-back", "delete-offsets")):
        cells.append(
            CellSpec(
                "reset-offsets",
                ("kafka-python", "librdkafka", "aiokafka", "java-classic")[i],
                "standalone",
                variant=mode,
            )
        )
    cells += [
        CellSpec("retention-delete-records", "kafka-python", "standalone", "earliest"),
        CellSpec("retention-time", "librdkafka", "empty", "earliest"),
        CellSpec("retention-time", "java-classic", "empty", "latest"),
        CellSpec("topic-deleted", "aiokafka", "empty", variant="caught-up"),
        CellSpec("topic-deleted", "java-consumer", "empty", variant="behind"),
        CellSpec("topic-recreated", "librdkafka", "empty", "earliest"),
        CellSpec("topic-recreated", "kafka-python", "empty", "latest"),
    ]
    for client in CLIENTS:  # the third phase (tests.truth.disruptive): after every other cell
        for reset in ("earliest", "latest"):
            cells.append(CellSpec("partitions-added", client, "active", reset))
        cells.append(CellSpec("coordinator-failover", client, "active"))
    for i, client in enumerate(CLIENTS):  # a leader moves under the member: each client once
        cells.append(CellSpec(("reassignment", "preferred-election")[i % 2], client, "active"))
    return cells


@dataclass(frozen=True)
class NotRun:
    """A cell that did not give an account: it cannot apply (``skipped``), or its scenario failed."""

    reason: str
    skipped: bool


Outcome = CellOutcome | NotRun


def run_matrix(
    kafka: SandboxCluster,
    runtime: RuntimeThread,
    root: Path,
    cells: Sequence[CellSpec],
    workers: int = 6,
    phases: dict[str, float] | None = None,
) -> dict[str, Outcome]:
    """Run ``cells``: the unclean-election ones together around one election, the rest side by side.
    ``phases`` (if given) gets each phase's wall seconds."""
    results: dict[str, Outcome] = {}
    took = phases if phases is not None else {}
    began = time.monotonic()
    stages = {c.id: Stage(kafka, runtime, root, c.id.replace(".", "-")) for c in cells}
    unclean = [c for c in cells if c.operation == "unclean-election"]
    disruptive = [c for c in cells if c.operation in DISRUPTIVE]
    others = [c for c in cells if c.operation != "unclean-election" and c not in disruptive]

    def one(spec: CellSpec, scene: Callable[[Stage, CellSpec], None]) -> tuple[str, Outcome]:
        stage = stages[spec.id]
        try:
            scene(stage, spec)
            return spec.id, stage.finish()
        except NotApplicable as why:
            stage.abandon()
            return spec.id, NotRun(str(why), skipped=True)
        except Exception:  # the cell fails with its traceback; the other cells still run
            stage.abandon()
            return spec.id, NotRun(traceback.format_exc(), skipped=False)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(one, c, SCENARIOS[c.operation]) for c in others]
        results.update(f.result() for f in futures)
    took["side_by_side"] = round(time.monotonic() - began, 1)
    began = time.monotonic()
    try:
        run_unclean([(stages[c.id], c) for c in unclean])
    except Exception:
        failed = traceback.format_exc()
        for c in unclean:
            stages[c.id].abandon()
            results[c.id] = NotRun(failed, skipped=False)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results.update(pool.map(lambda c: _finished(c.id, stages[c.id]), unclean))
    took["unclean_election"] = round(time.monotonic() - began, 1)
    began = time.monotonic()
    results.update(run_disruptive(kafka, stages, disruptive, one))  # alone: brokers stop
    took["disruptive"] = round(time.monotonic() - began, 1)
    return results


def _finished(cell: str, stage: Stage) -> tuple[str, Outcome]:
    """The cell's account, or its failure (one cell's timeout must not take the others' accounts)."""
    try:
        return cell, stage.finish()
    except Exception:
        stage.abandon()
        return cell, NotRun(traceback.format_exc(), skipped=False)


def table(
    cells: Sequence[CellSpec], results: dict[str, Outcome], phases: dict[str, float] | None = None
) -> dict[str, object]:
    """The claim-versus-truth table: every cell, what its consumers did and what offsetguard said."""
    rows = []
    for c in cells:
        outcome = results.get(c.id)
        base: dict[str, object] = {
            "cell": c.id,
            "operation": c.operation,
            "variant": c.variant,
            "client": c.client,
            "group_kind": c.group_kind,
            "auto_offset_reset": c.reset,
        }
        if isinstance(outcome, CellOutcome):
            base.update(outcome.row())
            base["cell"] = c.id
            base["verdict"] = "within the truth" if not outcome.problems else "wrong"
        elif isinstance(outcome, NotRun):
            base["verdict"] = "not applicable" if outcome.skipped else "failed"
            base["reason"] = outcome.reason.strip().splitlines()[-1] if outcome.reason.strip() else ""
        else:
            base["verdict"] = "not run"
        rows.append(base)
    return {"phases_seconds": phases or {}, "cells": rows}
