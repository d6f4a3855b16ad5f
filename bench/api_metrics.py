"""bench/api_metrics: time to render ``/metrics`` for >= 100,000 series from synthetic observations.

Builds one cluster of ``--topics`` x ``--partitions`` partitions and ``--groups`` groups committing on
``--per-group`` partitions each (every other one lagging), seeds a real SQLite store with ``--history``
offsets observations so lag in seconds goes through the batched store query, then renders the registry
the app factory would build (plain text, OpenMetrics and gzip) from scratch (a new registry each time),
each ``--runs`` times.

And the steady state (``by_change``): one registry rendering a sequence of scrapes 15 s apart, as the
service's does. The first render; the same observation objects again (a scrape between two collector
cycles); ``--runs`` collector cycles that moved 1 % of the log ends and commits (new observation objects,
each recorded in the store as the offsets collector does); ``--runs`` that moved all of them. Measured
once, then run again with each body checked against a render from scratch. Process CPU seconds per
render (``time.process_time``), as the service's endpoint renders: ``--families`` (default: the
service's default, offsetguard's own), text, gzip, the GC thresholds of ``offsetguard serve`` and
``malloc_trim`` after each render; resident memory before the sequence, after it (its registry alive)
and at the peak of its renders. The sequence runs first, so that the renders from scratch of every
family set leave nothing in its figures.

    .venv/bin/python -m bench.api_metrics [--topics 50] [--partitions 100] [--groups 500] [--per-group 20]
    .venv/bin/python -m bench.api_metrics --topics 200 --groups 2000 --per-group 25   # 20k / 50k

Prints the figures and writes them to bench/results/metrics_render.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
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
from service import memory
from service.metrics import ClusterInputs, MetricsOptions, ScrapeInputs, build_registry, render
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


def moved(inputs: ClusterInputs, share: float, step: float, cycle: int) -> ClusterInputs:
    """``inputs`` one collector cycle (``step`` s) later: new observation objects, ``share`` of the log
    ends and of the commits moved on by one (a different ``share`` of them each ``cycle``)."""
    assert inputs.offsets is not None and inputs.committed is not None
    every = max(1, round(1 / share))

    def moves(n: int) -> bool:
        return (n + cycle) % every == 0

    parts = tuple(
        dataclasses.replace(p, log_end=p.log_end + 1) if moves(n) else p
        for n, p in enumerate(inputs.offsets.partitions)
    )
    commits = tuple(
        dataclasses.replace(o, offset=o.offset + 1) if moves(n) else o
        for n, o in enumerate(inputs.committed.offsets)
    )
    committed = inputs.committed
    assert isinstance(committed, CommittedObservation)
    return dataclasses.replace(
        inputs,
        offsets=OffsetsObservation(CLUSTER, inputs.offsets.observed_at + step, parts),
        committed=dataclasses.replace(committed, observed_at=committed.observed_at + step, offsets=commits),
    )


def by_change(
    store: Store, inputs: ClusterInputs, now: float, options: MetricsOptions, runs: int, check: bool
) -> tuple[dict[str, Any], dict[str, float]]:
    """The steady state (module docstring): CPU s per render by scenario; resident MB before the
    registry, after the sequence (the registry alive: what it keeps counted) and at the peak of its
    renders. ``check``: each body compared with a render from scratch (the figures then count those
    too: the measured sequence is another, unchecked)."""
    state = {"inputs": inputs, "now": now}

    def source() -> ScrapeInputs:
        return ScrapeInputs(clusters=[state["inputs"]], log_end_times=store)  # type: ignore[list-item]

    def clock() -> float:
        return state["now"]  # type: ignore[return-value]

    before = status_mb("VmRSS:")
    registry = build_registry(source, clock=clock, options=options)
    out: dict[str, Any] = {}
    peak = 0.0

    def scrape(name: str) -> None:
        nonlocal peak
        reset_peak()
        t0 = time.process_time()
        body = render(registry, accept_encoding="gzip").body
        spent = time.process_time() - t0
        peak = max(peak, status_mb("VmHWM:"))
        memory.trim()
        if check:
            fresh = render(build_registry(source, clock=clock, options=options), accept_encoding="gzip")
            assert body == fresh.body, f"{name}: the body differs from a render from scratch"
            memory.trim()
        out.setdefault(name, []).append(spent)

    scrape("first")
    state["now"] += 15
    scrape("same_observations")
    cycle = 0
    for name, share in (("moved_1pct", 0.01), ("moved_100pct", 1.0)):
        for _ in range(runs):
            cycle += 1
            state["inputs"] = moved(state["inputs"], share, 15.0, cycle)  # type: ignore[arg-type]
            state["now"] += 15
            store.record_offsets(state["inputs"].offsets)  # type: ignore[union-attr]
            scrape(name)
    figures = {k: {"median": statistics.median(v), "all": v} for k, v in out.items()}
    rss = {"before": before, "after_registry_alive": status_mb("VmRSS:"), "peak_during_renders": peak}
    return figures, {k: round(v, 1) for k, v in rss.items()}


def status_mb(field: str) -> float:
    """``field`` of /proc/self/status (VmRSS, VmHWM) in MB, after a full collection and a trim."""
    gc.collect()
    memory.trim()
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    return 0.0


def reset_peak() -> None:
    """Start VmHWM over from the current resident size (Linux >= 4.0)."""
    gc.collect()
    memory.trim()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def fleet_arguments(parser: argparse.ArgumentParser, runs: int) -> None:
    """The fleet :func:`observations` builds (topics x partitions, groups x per-group) and its seeded
    history, and how many renders each figure takes."""
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--groups", type=int, default=500)
    parser.add_argument("--per-group", type=int, default=20)
    parser.add_argument("--history", type=int, default=10)
    parser.add_argument("--runs", type=int, default=runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    fleet_arguments(parser, runs=5)
    parser.add_argument("--families", default="offsetguard", help="comma-separated family sets (by_change)")
    args = parser.parse_args()
    memory.tune_gc()  # as offsetguard serve

    now = time.time()
    inputs = observations(args, now)
    with tempfile.TemporaryDirectory(prefix="og-bench-metrics-") as tmp:
        store = Store.open(StoreSettings(path=Path(tmp) / "og.db"))
        try:
            seed(store, inputs, args.history, now)
            options = MetricsOptions(families=frozenset(args.families.split(",")))  # type: ignore[arg-type]
            change, rss = by_change(store, inputs, now, options, args.runs, check=False)
            by_change(store, inputs, now, options, args.runs, check=True)  # the same bytes as from scratch
            scrape = ScrapeInputs(clusters=[inputs], log_end_times=store)

            def registry() -> Any:  # a new one per render: from scratch, nothing kept
                return build_registry(lambda: scrape, clock=lambda: now)

            view_s, view = timed(args.runs, lambda: cluster_view(inputs, store, now))
            plain_s, plain = timed(args.runs, lambda: render(registry()))
            om_s, _ = timed(
                args.runs, lambda: render(registry(), accept="application/openmetrics-text; version=1.0.0")
            )
            gzip_s, zipped = timed(args.runs, lambda: render(registry(), accept_encoding="gzip"))
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
        "by_change_cpu_s": change,
        "by_change_rss_mb": rss,
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
    steady = ", ".join(f"{k} {v['median']:.3f}" for k, v in change.items())
    print(
        f"by change ({args.families}, text+gzip), CPU s per render: {steady}; resident MB {rss}",
        flush=True,
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "metrics_render.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
