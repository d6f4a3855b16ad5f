"""bench/log_end_times: "when did the log end reach X" from the kept rows against SQL, per call.

A real SQLite store filled like a busy cluster (``--partitions`` partitions, every log end moving every
5 s cycle: bench/service's ``--churn 1``) by one store object for ``--history`` cycles, then reopened (a
warm start: no partition inserted by the reader) and ``--cycles`` more written through it, as the
offsets collector does. Then the lookups the service makes at churn 1, each ``--runs`` times, alternating
the kept rows off (``Store.writer_epoch`` saying this replica may not write: every request asked of SQL,
as before store/log_end_memory) and on:

- ``single``: detection's, one :meth:`Store.log_end_reached_at` per group-partition (``--groups`` groups
  committed on 25 partitions each) whose commit is one message behind the log end (the churn's commit
  lands after the offsets observation), CPU seconds per call;
- ``batch``: the render's, one :meth:`Store.log_end_reached_at_many` of every distinct such crossing;
- ``batch_old``: the same with commits ``--old-lag`` cycles behind (beyond the kept rows: SQL either way).

Answers are checked identical between the two. Also: CPU s of a cycle's write (the first after the reopen
asks the newest stored row time of every partition), and the kept rows' size.

    .venv/bin/python -m bench.log_end_times [--partitions 5000] [--groups 500] [--history 60] [--runs 5]

Prints the figures and writes bench/results/log_end_times.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.result_file import write_result
from collectors.model import OffsetsObservation, PartitionOffsets
from store import Store
from store.log_end_memory import KEEP
from store.settings import StoreSettings

CLUSTER = "bench"
T0 = 1_795_000_000.0
TICK_S = 5.0
PER_GROUP = 25


def cycle(tps: list[tuple[str, int]], n: int) -> OffsetsObservation:
    """Cycle ``n``: every partition's log end at ``1000 + n``."""
    return OffsetsObservation(
        CLUSTER, T0 + n * TICK_S, tuple(PartitionOffsets(t, p, 0, 1000 + n) for t, p in tps)
    )


def cpu(work: Callable[[], Any]) -> tuple[float, Any]:
    start = time.process_time()
    out = work()
    return time.process_time() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=5000)
    parser.add_argument("--groups", type=int, default=500)
    parser.add_argument("--history", type=int, default=60, help="cycles written before the reopen")
    parser.add_argument("--cycles", type=int, default=3, help="cycles written after the reopen")
    parser.add_argument("--old-lag", type=int, default=30, help="cycles behind for batch_old")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", default="log_end_times.json")
    args = parser.parse_args()
    tps = [(f"topic-{i // 100:03d}", i % 100) for i in range(args.partitions)]
    commits = [tps[(g * PER_GROUP + k) % len(tps)] for g in range(args.groups) for k in range(PER_GROUP)]
    writes: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        settings = StoreSettings(path=Path(tmp) / "og.db")
        with Store.open(settings) as store:
            for n in range(args.history):
                store.record_offsets(cycle(tps, n))
        with Store.open(settings) as store:
            each = [
                cpu(lambda n=n: store.record_offsets(cycle(tps, n)))[0]
                for n in range(args.history, args.history + args.cycles)
            ]
            writes = {
                "after_reopen_first": round(each[0], 4),
                "after_reopen_then": [round(x, 4) for x in each[1:]],
            }
            last = args.history + args.cycles - 1
            end = 1000 + last
            singles = [(t, p, end) for t, p in commits]
            batch = {(t, p, end) for t, p in tps}
            old = {(t, p, end - args.old_lag) for t, p in tps}
            figures, identical = measure(store, singles, batch, old, args.runs)
            kept = kept_bytes(store)
            counts = store.log_end_lookups()
    result = {
        "benchmark": "log_end_times",
        "when": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "setup": vars(args) | {"group_partitions": len(commits), "keep": KEEP, "store": "sqlite"},
        "cpu_s": figures,
        "write_cpu_s": writes,
        "kept_rows_bytes": kept,
        "lookups": {"memory": counts.memory, "sql": counts.sql},
        "identical": identical,
    }
    write_result(args.out, result)
    print(json.dumps(result, indent=2))


def measure(
    store: Store,
    singles: list[tuple[str, int, int]],
    batch: set[tuple[str, int, int]],
    old: set[tuple[str, int, int]],
    runs: int,
) -> tuple[dict[str, Any], bool]:
    sql_only: Callable[[], int | None] = lambda: None  # noqa: E731  (this replica "may not write")
    modes: dict[str, Callable[[], int | None] | None] = {"sql": sql_only, "memory": None}
    times: dict[str, dict[str, list[float]]] = {
        m: {"single": [], "batch": [], "batch_old": []} for m in modes
    }
    answers: dict[str, list[Any]] = {m: [] for m in modes}
    for _ in range(runs):
        for mode, epoch in modes.items():
            store.writer_epoch = epoch
            took, single = cpu(lambda: [store.log_end_reached_at(CLUSTER, *w) for w in singles])
            times[mode]["single"].append(took / len(singles))
            took, many = cpu(lambda: store.log_end_reached_at_many(CLUSTER, batch))
            times[mode]["batch"].append(took)
            took, many_old = cpu(lambda: store.log_end_reached_at_many(CLUSTER, old))
            times[mode]["batch_old"].append(took)
            answers[mode] = [single, many, many_old]
    store.writer_epoch = None
    figures = {
        mode: {
            part: {"median": round(statistics.median(xs), 7), "each": [round(x, 7) for x in xs]}
            for part, xs in parts.items()
        }
        for mode, parts in times.items()
    }
    figures["calls"] = {"single": len(singles), "batch": len(batch), "batch_old": len(old)}
    return figures, answers["sql"] == answers["memory"]


def kept_bytes(store: Store) -> int:
    """The kept rows' arrays and the dict holding them, from sys.getsizeof."""
    memory = store._partitions.log_ends
    rows = memory._rows
    total = sys.getsizeof(rows)
    for rec in rows.values():
        total += sys.getsizeof(rec)
    return total


if __name__ == "__main__":
    main()
