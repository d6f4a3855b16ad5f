"""bench/state_save: what a detection state save costs at fleet scale, from scratch and by change.

Folds 5 s cycles of synthetic observations through :func:`alerts.engine.evaluate` as bench/evaluate does
(``--partitions`` partitions, ``--groups`` groups committed on 25 partitions each, ``--churn`` of the
partitions getting a message and their groups a new commit every cycle, the service's two evaluations a
cycle) and saves the state every ``--save-every`` cycles (the service's ``state_save_seconds``, 120 s,
is 24 cycles) into two stores: from scratch (:func:`service.detection.state_codec.encode`, every part
written: the loop before saves by change) and by change (:func:`~service.detection.state_codec.
encode_changes` against the chunks of the last save, as :class:`~service.detection.loop.DetectionLoop`
does). After each save the store saved by change is checked to hold byte for byte what the other does.
Reports CPU seconds per save (encode and store write together) and the parts written, and writes
bench/results/state_save.json.

    .venv/bin/python -m bench.state_save [--partitions 20000] [--groups 2000] [--churn 0.01]
        [--saves 5] [--save-every 24]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from alerts.engine import evaluate
from alerts.state import CycleInputs, DetectionState
from bench.evaluate import CLUSTER, World
from bench.result_file import write_result
from service.detection import state_codec
from service.memory import tune_gc
from service.settings import DetectionSettings
from store.alerts import AlertStore
from store.settings import StoreSettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=20_000)
    parser.add_argument("--groups", type=int, default=2_000)
    parser.add_argument("--churn", type=float, default=0.01)
    parser.add_argument("--saves", type=int, default=5)
    parser.add_argument("--save-every", type=int, default=24, help="cycles (5 s each) between saves")
    parser.add_argument("--out", default="state_save.json", help="file name under bench/results/")
    args = parser.parse_args()

    world = World(args.partitions, args.groups)
    thresholds = DetectionSettings().thresholds()
    tune_gc()
    state = DetectionState()
    now = time.time()
    meta = world.metadata(now)
    scratch: list[float] = []
    by_change: list[float] = []
    written: list[int] = []
    parts_total = 0
    held: list[state_codec.Chunk | None] = []
    with tempfile.TemporaryDirectory() as tmp:
        whole = AlertStore.open(StoreSettings(path=Path(tmp) / "scratch.db"))
        changed = AlertStore.open(StoreSettings(path=Path(tmp) / "by_change.db"))
        try:
            for cycle in range(1, args.saves * args.save_every + 1):
                now += 5.0
                state = _cycle(world, state, meta, cycle, now, args.churn, thresholds)
                if cycle % args.save_every:
                    continue
                save = cycle // args.save_every
                for which in ("scratch", "by_change") if save % 2 else ("by_change", "scratch"):
                    t0 = time.process_time()
                    if which == "scratch":
                        body, parts = state_codec.encode(state)
                        whole.save_state(CLUSTER, body, state_codec.FORMAT, now, parts)
                        scratch.append(time.process_time() - t0)
                    else:
                        body, changes, chunks = state_codec.encode_changes(state, held)
                        counted = _Counted(changes)
                        changed.save_state(CLUSTER, body, state_codec.FORMAT, now, counted)
                        by_change.append(time.process_time() - t0)
                        held = chunks
                        written.append(counted.written)
                        parts_total = counted.total
                if changed.load_state(CLUSTER) != whole.load_state(CLUSTER):
                    raise SystemExit(f"save {save}: the store saved by change holds another state")
        finally:
            whole.close()
            changed.close()
    result: dict[str, Any] = {
        "benchmark": "state_save",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "setup": vars(args)
        | {"committed_group_partitions": len(state.commits), "chunk_rows": state_codec.CHUNK_ROWS},
        # CPU s per save, encode and store write; by change: the first save (nothing held) apart
        "scratch_cpu_s": {"median": round(statistics.median(scratch), 4), "each": _rounded(scratch)},
        "by_change_cpu_s": {
            "first": round(by_change[0], 4),
            "median_after": round(statistics.median(by_change[1:]), 4) if len(by_change) > 1 else None,
            "each": _rounded(by_change),
        },
        "parts": {"total": parts_total, "written_each": written},
        "identical": True,  # every save checked byte for byte (the run stops otherwise)
    }
    write_result(args.out, result)
    print(
        f"RESULT CPU s per save at {args.partitions} partitions / {len(state.commits)} group-partitions,"
        f" churn {args.churn}: from scratch {result['scratch_cpu_s']['median']} (median), by change"
        f" {result['by_change_cpu_s']['median_after']} (median after the first); parts written {written}"
        f" of {parts_total}"
    )


class _Counted:
    """The parts handed to the store, counting those written (not None)."""

    def __init__(self, changes: Any) -> None:
        self._changes = changes
        self.total = 0
        self.written = 0

    def __iter__(self) -> Any:
        for name, text in self._changes:
            self.total += 1
            self.written += text is not None
            yield name, text


def _cycle(
    world: World,
    state: DetectionState,
    meta: Any,
    cycle: int,
    now: float,
    churn: float,
    thresholds: Any,
) -> DetectionState:
    """One 5 s cycle of the service: the offsets evaluation with the tail's commits, then the committed
    offsets (and the groups every third cycle) 2.5 s later."""
    events = world.move(churn, now - 1.0)
    first = CycleInputs(
        CLUSTER, metadata=meta, offsets=world.offsets(now), commit_events=tuple(events), tail_live=True
    )
    state = evaluate(state, first, now, thresholds)[1]
    later = now + 2.5
    second = CycleInputs(
        CLUSTER,
        committed=world.committed_obs(later),
        groups=world.groups(later) if cycle % 3 == 0 else None,
        tail_live=True,
    )
    return evaluate(state, second, later, thresholds)[1]


def _rounded(values: list[float]) -> list[float]:
    return [round(v, 4) for v in values]


if __name__ == "__main__":
    main()
