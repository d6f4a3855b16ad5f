"""Time how long the store takes to record one big observation cycle, and a steady churn of them.

    .venv/bin/python -m bench.store_write [--groups 500] [--partitions-per-group 100] [--partitions 20000]
        [--churn 0.01] [--cycles 24] [--committed-churn 0.01] [--out store_write.json]

Prints wall-clock seconds for: the first cycle (every key new), a cycle where every value changed, and a
cycle where nothing changed. Then the steady state of the service: ``--cycles`` offsets observations 5 s
apart with ``--churn`` of the partitions' log ends moved each time, an unchanged partition's
``PartitionOffsets`` the same object as last cycle (as the offsets collector hands it), each recorded
with ``Store.record_offsets``: CPU seconds per record (median, mean) and the rows written, into
bench/results/``--out``. Then the committed offsets, as the committed collector hands them (from the
live tail's view) to ``Store.record_committed`` every 5 s: ``--groups`` groups of
``--partitions-per-group`` partitions, ``--committed-churn`` of the groups having committed every
partition anew each cycle: CPU seconds per record (median, mean; the history grows, as in the service)
and the rows written; for both, the system-call CPU and the bytes written and read per record over the
first and last tenth of the cycles. ``--groups 500 --partitions-per-group 25 --partitions 5000 --churn 1
--committed-churn 1 --out store_write_churn1.json`` is bench/service's 5k size at ``--churn 1`` (2,500
commits a second). Uses a throw-away database in a temporary directory.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from itertools import chain
from pathlib import Path
from typing import Any

from bench.result_file import write_result
from collectors.model import CommittedObservation, CommittedOffset, OffsetsObservation, PartitionOffsets
from store import Store
from store.records import WriteCounts
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


class Moving:
    """The log ends of ``partitions`` partitions, ``churn`` of them moved per cycle (a cursor over them,
    as bench/service's traffic); an unchanged partition's offsets the same object as last cycle."""

    def __init__(self, partitions: int, churn: float) -> None:
        self.parts = [
            PartitionOffsets(f"topic-{i // 100:04d}", i % 100, 0, 1, 1, 7) for i in range(partitions)
        ]
        self.per_cycle = round(churn * partitions)
        self.cursor = 0

    def observe(self, at: float) -> OffsetsObservation:
        n = len(self.parts)
        for k in range(self.per_cycle):
            i = (self.cursor + k) % n
            p = self.parts[i]
            self.parts[i] = PartitionOffsets(p.topic, p.partition, p.log_start, p.log_end + 1, p.leader, 7)
        self.cursor = (self.cursor + self.per_cycle) % n
        return OffsetsObservation("bench", at, tuple(self.parts))


def steady(store: Store, args: argparse.Namespace, start: float) -> dict[str, Any]:
    moving = Moving(args.partitions, args.churn)
    return _cycles(store.record_offsets, moving.observe, start, args.cycles)


def _io_chars() -> tuple[int, int]:
    """Bytes this process has written and read through system calls (``/proc/self/io`` wchar, rchar):
    the database file and its WAL, page cache hits included; (0, 0) where there is no such file."""
    try:
        fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    except OSError:
        return 0, 0
    return int(fields["wchar"]), int(fields["rchar"])


def _cycles(
    record: Callable[[Any], WriteCounts], observe: Callable[[float], Any], start: float, cycles: int
) -> dict[str, Any]:
    """CPU per ``record`` of ``cycles`` observations 5 s apart, after a first one (every key new) not
    measured; the system-call share of it and the bytes written and read per record, overall and over the
    first and last tenth of the cycles (the history grows: its cost does too)."""
    record(observe(start))
    # CPU s, system CPU s (os.times: 10 ms ticks, so only means of it), bytes written, bytes read
    spent: list[tuple[float, float, int, int]] = []
    rows: list[int] = []
    for cycle in range(1, cycles + 1):
        obs = observe(start + 5.0 * cycle)
        c0, t0, io0 = time.process_time(), os.times(), _io_chars()
        counts = record(obs)
        c1, t1, io1 = time.process_time(), os.times(), _io_chars()
        spent.append((c1 - c0, t1.system - t0.system, io1[0] - io0[0], io1[1] - io0[1]))
        rows.append(counts.history_rows)
    tenth = max(1, cycles // 10)
    return {
        "median_cpu_s": round(statistics.median(c for c, _, _, _ in spent), 5),
        "mean_cpu_s": round(statistics.fmean(c for c, _, _, _ in spent), 5),
        "history_rows_per_record": round(statistics.fmean(rows), 1),
        "first_tenth": _phase(spent[:tenth]),
        "last_tenth": _phase(spent[-tenth:]),
    }


def _phase(spent: list[tuple[float, float, int, int]]) -> dict[str, float]:
    return {
        "mean_cpu_s": round(statistics.fmean(c for c, _, _, _ in spent), 5),
        "mean_system_cpu_s": round(statistics.fmean(s for _, s, _, _ in spent), 5),
        "written_mb_per_record": round(statistics.fmean(w for _, _, w, _ in spent) / 1e6, 2),
        "read_mb_per_record": round(statistics.fmean(r for _, _, _, r in spent) / 1e6, 2),
    }


class Committing:
    """The committed offsets of ``groups`` groups of ``per_group`` partitions, as the tail-fed committed
    collector hands them: one tuple in group order, each cycle ``churn`` of the groups (a cursor over them)
    committed every partition one message further, the other groups' offsets the same objects."""

    def __init__(self, groups: int, per_group: int, churn: float) -> None:
        self.names = tuple(f"group-{g:05d}" for g in range(groups))
        self.runs = [
            tuple(
                CommittedOffset(
                    name, f"topic-{(g * per_group + p) // 100:04d}", (g * per_group + p) % 100, 1, 3
                )
                for p in range(per_group)
            )
            for g, name in enumerate(self.names)
        ]
        self.per_cycle = round(churn * groups)
        self.cursor = 0

    def observe(self, at: float) -> CommittedObservation:
        n = len(self.runs)
        for k in range(self.per_cycle):
            g = (self.cursor + k) % n
            self.runs[g] = tuple(
                CommittedOffset(c.group, c.topic, c.partition, c.offset + 1, 3) for c in self.runs[g]
            )
        self.cursor = (self.cursor + self.per_cycle) % n
        return CommittedObservation("bench", at, tuple(chain.from_iterable(self.runs)), self.names)


def steady_committed(store: Store, args: argparse.Namespace, start: float) -> dict[str, Any]:
    committing = Committing(args.groups, args.partitions_per_group, args.committed_churn)
    return _cycles(store.record_committed, committing.observe, start, args.cycles)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=500)
    parser.add_argument("--partitions-per-group", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=20_000)
    parser.add_argument("--churn", type=float, default=0.01)
    parser.add_argument("--cycles", type=int, default=24)
    parser.add_argument("--committed-churn", type=float, default=0.01, help="share of groups committing")
    parser.add_argument("--out", default="store_write.json", help="file name under bench/results/")
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
    with (
        tempfile.TemporaryDirectory() as tmp,
        Store.open(StoreSettings(path=Path(tmp) / "bench.db")) as store,
    ):
        figures = steady(store, args, time.time())
    with (
        tempfile.TemporaryDirectory() as tmp,
        Store.open(StoreSettings(path=Path(tmp) / "bench.db")) as store,
    ):
        committed_figures = steady_committed(store, args, time.time())
    result = {
        "benchmark": "store_write",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "setup": vars(args),
        "record_offsets": figures,  # CPU s per Store.record_offsets of the steady churn
        "record_committed": committed_figures,  # CPU s per Store.record_committed of the committing groups
    }
    write_result(args.out, result)
    print(f"RESULT record_offsets at {args.partitions} partitions, churn {args.churn}: {figures}")
    print(
        f"RESULT record_committed at {args.groups} groups x {args.partitions_per_group}, churn"
        f" {args.committed_churn}: {committed_figures}"
    )


if __name__ == "__main__":
    main()
