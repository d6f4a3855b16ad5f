"""Time how long the store takes to record one big observation cycle.

    .venv/bin/python -m bench.store_write [--groups 500] [--partitions-per-group 100] [--partitions 20000]

Prints wall-clock seconds for: the first cycle (every key new), a cycle where every value changed, and a
cycle where nothing changed. Uses a throw-away database in a temporary directory.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from collectors.model import CommittedObservation, CommittedOffset, OffsetsObservation, PartitionOffsets
from store import Store
from store.settings import StoreSettings


def committed(cycle: int, groups: int, per_group: int, at: float) -> CommittedObservation:
    offsets = tuple(
        CommittedOffset(f"group-{g}", f"topic-{g % 50}", p, 1_000 * cycle + p, 3)
        for g in range(groups)
        for p in range(per_group)
    )
    return CommittedObservation("bench", at, offsets, tuple(f"group-{g}" for g in range(groups)))


def offsets(cycle: int, partitions: int, at: float) -> OffsetsObservation:
    parts = tuple(
        PartitionOffsets(f"topic-{i % 200}", i // 200, 0, 5_000 * cycle + i, 1, 7) for i in range(partitions)
    )
    return OffsetsObservation("bench", at, parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=500)
    parser.add_argument("--partitions-per-group", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=20_000)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        Store.open(StoreSettings(path=Path(tmp) / "bench.db")) as store,
    ):
        start = time.time()
        # cycle 1: all new; 2: every value changed; 3: nothing changed (cycle number reused)
        for label, cycle in (("all new", 1), ("all changed", 2), ("unchanged", 2)):
            at = start + cycle * 5.0 + (0.5 if label == "unchanged" else 0.0)
            c_obs = committed(cycle, args.groups, args.partitions_per_group, at)
            o_obs = offsets(cycle, args.partitions, at)
            t0 = time.perf_counter()
            c_counts = store.record_committed(c_obs)
            t1 = time.perf_counter()
            o_counts = store.record_offsets(o_obs)
            t2 = time.perf_counter()
            print(
                f"{label:11} committed {len(c_obs.offsets)} ({c_counts.history_rows} rows) {t1 - t0:6.3f}s"
                f" | offsets {len(o_obs.partitions)} ({o_counts.history_rows} rows) {t2 - t1:6.3f}s"
                f" | total {t2 - t0:6.3f}s"
            )


if __name__ == "__main__":
    main()
