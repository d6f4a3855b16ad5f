"""The truth matrix: which cells run, and running them side by side on one cluster and one runtime.

A cell that cannot apply is listed with its reason (the test skips it and says why).
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from sandbox.cluster import SandboxCluster
from tests.e2e.harness import RuntimeThread
from tests.truth.cells import CLIENTS, CLOSE_ON_DELETED, SCENARIOS, CellSpec
from tests.truth.clients import NotApplicable
from tests.truth.disruptive import OPERATIONS as DISRUPTIVE
from tests.truth.disruptive import run_disruptive
from tests.truth.stage import CellOutcome, Stage
from tests.truth.unclean import prepare_unclean, run_unclean

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


# Rough wall seconds of a side-by-side cell (the members' journals of full runs on 2 cores), only to submit
# the longest first: the phase lasts its slowest cells plus the queue before them, and with the catalog's
# order the time-retention cells (20 s) came last and ran while the other workers idled.
EXPECTED_SECONDS = {
    "retention-time": 20.0,  # 12 s retention, then the group's return
    "topic-deleted": 16.0,  # active: the member runs 8 s on the deleted topic, then closes (Empty: 2 s)
    "reset-offsets": 6.0,  # by-duration and to-datetime: + a gap between two batches (see cells)
    "retention-delete-records": 6.0,
    "topic-recreated": 5.0,
    "offset-delete-active": 3.0,
}
JAVA_START = 5.0  # a JVM member's start (and the tool's, for the cells that run one more)


def expected_seconds(spec: CellSpec) -> float:
    """About how long ``spec`` takes side by side (for ordering: longest first)."""
    seconds = EXPECTED_SECONDS.get(spec.operation, 6.0)
    if spec.operation == "topic-deleted" and spec.group_kind != "active":
        seconds = 2.0
    if spec.variant in ("to-datetime", "by-duration"):
        seconds += 10.0
    if spec.client.startswith("java"):
        seconds += JAVA_START
        if spec.variant == "auto-create-off":
            seconds += CLOSE_ON_DELETED  # the classic consumer's close is cut there
    return seconds


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
    """Run ``cells``: the unclean-election ones together around one election, the rest side by side
    (longest first), then the disruptive ones. ``phases`` (if given) gets each phase's wall seconds."""
    results: dict[str, Outcome] = {}
    took = phases if phases is not None else {}
    began = time.monotonic()
    stages = {c.id: Stage(kafka, runtime, root, c.id.replace(".", "-")) for c in cells}
    unclean = [c for c in cells if c.operation == "unclean-election"]
    disruptive = [c for c in cells if c.operation in DISRUPTIVE]
    others = [c for c in cells if c.operation != "unclean-election" and c not in disruptive]

    def play(spec: CellSpec, scene: Callable[[Stage, CellSpec], None]) -> NotRun | None:
        """The cell's scene; None when it ran to its end (its account is then :func:`_finished`'s)."""
        stage = stages[spec.id]
        try:
            scene(stage, spec)
            return None
        except NotApplicable as why:
            stage.abandon()
            return NotRun(str(why), skipped=True)
        except Exception:  # the cell fails with its traceback; the other cells still run
            stage.abandon()
            return NotRun(traceback.format_exc(), skipped=False)

    def one(spec: CellSpec, scene: Callable[[Stage, CellSpec], None]) -> tuple[str, Outcome]:
        failed = play(spec, scene)
        return (spec.id, failed) if failed is not None else _finished(spec.id, stages[spec.id])

    elected = [(stages[c.id], c) for c in unclean]
    # A worker runs a cell's scene (members, tools: the CPU); its end (members stopped, offsetguard's last
    # evaluation awaited, the log read back: seconds of waiting) no longer holds the worker.
    with ThreadPoolExecutor(max_workers=workers) as pool, ThreadPoolExecutor(len(others) + 1) as ends:
        longest = sorted(others, key=expected_seconds, reverse=True)
        playing = {pool.submit(play, c, SCENARIOS[c.operation]): c for c in longest}
        # the election's cells set up their topics (no broker touched yet) once a worker is free at the end
        prepared = pool.submit(prepare_unclean, elected)
        ending = []
        for done in as_completed(playing):
            c = playing[done]
            if (failed := done.result()) is not None:
                results[c.id] = failed
            else:
                ending.append(ends.submit(_finished, c.id, stages[c.id]))
        results.update(f.result() for f in ending)
        took["side_by_side"] = round(time.monotonic() - began, 1)
        began = time.monotonic()  # the election's phase: from here (its setup may still be finishing)
    try:
        prepared.result()
        run_unclean(elected)
    except Exception:
        failed = traceback.format_exc()
        for c in unclean:
            stages[c.id].abandon()
            results[c.id] = NotRun(failed, skipped=False)
    else:
        with ThreadPoolExecutor(max_workers=max(len(unclean), 1)) as pool:  # all at once, as they ran
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
