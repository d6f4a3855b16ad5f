"""bench/api_metrics: time to render ``/metrics`` for >= 100,000 series from synthetic observations.

Builds one cluster of ``--topics`` x ``--partitions`` partitions and ``--groups`` groups committing on
``--per-group`` partitions each (every other one lagging), seeds a real SQLite store with ``--history``
offsets observations so lag in seconds goes through the batched store query, then renders the registry
the app factory would build (plain text, OpenMetrics and gzip), each ``--runs`` times.

    .venv/bin/python -m bench.api_metrics [--topics 50] [--partitions 100] [--groups 500] [--per-group 20]

Prints the figures and writes them to bench/results/metrics_render.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from collectors.model import (
    Broker,
    ClusterMetadata,
    CommittedObservation,
    CommittedOffset,
    GroupInfo,
    GroupMember,
    GroupsObservation,
    OffsetsObservation,
    PartitionInfo,
    PartitionOffsets,
    TopicInfo,
    TopicPartition,
)
from service.metrics import ClusterInputs, ScrapeInputs, build_registry, render
from service.metrics.view import cluster_view
from store import Store
from store.settings import StoreSettings

RESULTS = Path(__file__).resolve().parent / "results"
CLUSTER = "bench"


def observations(args: argparse.Namespace, now: float) -> ClusterInputs:
    names = [f"topic-{t:03d}" for t in range(args.topics)]
    topics = tuple(
        TopicInfo(
            n, False, tuple(PartitionInfo(n, p, 1, 3, (1, 2, 3), (1, 2, 3)) for p in range(args.partitions))
        )
        for n in names
    )
    meta = ClusterMetadata(CLUSTER, now, "id", 1, (Broker(1, "b1", 9092), Broker(2, "b2", 9092)), topics)
    ends = PartitionOffsets
    offsets = OffsetsObservation(
        CLUSTER, now, tuple(ends(n, p, 0, 10_000, 1, 3) for n in names for p in range(args.partitions))
    )
    all_tps = [(n, p) for n in names for p in range(args.partitions)]
    commits, groups = [], []
    for g in range(args.groups):
        group = f"group-{g:04d}"
        tps = [all_tps[(g * args.per_group + i) % len(all_tps)] for i in range(args.per_group)]
        commits += [
            CommittedOffset(group, t, p, 10_000 - (i % 2) * 100, None) for i, (t, p) in enumerate(tps)
        ]
        member = GroupMember(
            f"{group}-m", "client", "/10.0.0.1", assignment=tuple(TopicPartition(*tp) for tp in tps)
        )
        groups.append(GroupInfo(group, "classic", "Stable", "consumer", "range", (member,)))
    return ClusterInputs(
        CLUSTER,
        meta,
        offsets,
        GroupsObservation(CLUSTER, now, tuple(groups)),
        CommittedObservation(CLUSTER, now, tuple(commits), tuple(g.group_id for g in groups)),
    )


def seed(store: Store, inputs: ClusterInputs, history: int, now: float) -> None:
    """``history`` observations 10 s apart, the log ends growing by 100 each, ending at the inputs'."""
    assert inputs.offsets is not None
    for i in range(history):
        grow = (history - 1 - i) * 100
        parts = tuple(
            PartitionOffsets(p.topic, p.partition, 0, p.log_end - grow) for p in inputs.offsets.partitions
        )
        store.record_offsets(OffsetsObservation(CLUSTER, now - 10 * (history - 1 - i), parts))


def timed(runs: int, fn: Any) -> tuple[list[float], Any]:
    times, out = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return times, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--groups", type=int, default=500)
    parser.add_argument("--per-group", type=int, default=20)
    parser.add_argument("--history", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    now = time.time()
    inputs = observations(args, now)
    with tempfile.TemporaryDirectory(prefix="og-bench-metrics-") as tmp:
        store = Store.open(StoreSettings(path=Path(tmp) / "og.db"))
        try:
            seed(store, inputs, args.history, now)
            scrape = ScrapeInputs(clusters=[inputs], log_end_times=store)
            registry = build_registry(lambda: scrape, clock=lambda: now)
            view_s, view = timed(args.runs, lambda: cluster_view(inputs, store, now))
            plain_s, plain = timed(args.runs, lambda: render(registry))
            om_s, _ = timed(
                args.runs, lambda: render(registry, accept="application/openmetrics-text; version=1.0.0")
            )
            gzip_s, zipped = timed(args.runs, lambda: render(registry, accept_encoding="gzip"))
        finally:
            store.close()

    series = sum(1 for line in plain.body.splitlines() if line and not line.startswith(b"#"))
    with_seconds = sum(1 for r in view.rows if r.seconds is not None)
    result: dict[str, Any] = {
        "benchmark": "api_metrics",
        "when": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "setup": {k: v for k, v in vars(args).items()},
        "series": series,
        "committed_group_partitions": len(view.rows),
        "rows_with_lag_seconds": with_seconds,
        "body_bytes": len(plain.body),
        "gzip_bytes": len(zipped.body),
        "snapshot_view_s": {"median": statistics.median(view_s), "all": view_s},
        "render_text_s": {"median": statistics.median(plain_s), "all": plain_s},
        "render_openmetrics_s": {"median": statistics.median(om_s), "all": om_s},
        "render_text_gzip_s": {"median": statistics.median(gzip_s), "all": gzip_s},
    }
    print(
        f"{series} series, {len(view.rows)} group-partitions ({with_seconds} with lag seconds): "
        f"view {result['snapshot_view_s']['median']:.3f} s (incl. store query), "
        f"render text {result['render_text_s']['median']:.3f} s, "
        f"openmetrics {result['render_openmetrics_s']['median']:.3f} s, "
        f"text+gzip {result['render_text_gzip_s']['median']:.3f} s "
        f"({len(plain.body) / 1e6:.1f} MB -> {len(zipped.body) / 1e6:.1f} MB)",
        flush=True,
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "metrics_render.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
