"""bench/metrics_memory: where the memory of ``/metrics`` and of the tail-fed committed view is, in process.

Builds the observations of ``bench.api_metrics`` (``--topics`` x ``--partitions`` partitions, ``--groups``
groups committing on ``--per-group`` partitions each) and a store seeded with their history, then:

* resident memory (VmRSS after a full collection and ``malloc_trim``) added by each part: the
  observations, the seeded store, a :class:`~collectors.tail_committed.TailCommitted` seeded by a poll of
  those offsets and then told every offset again by the tail (its per-key change counters held, as in the
  service), and a registry with the service's default families (offsetguard's) after ``--runs`` renders
  15 s apart moving 1 % of the log ends and commits (its memos held);
* the peak of each such render above the resident size before it (VmHWM, text+gzip as Prometheus asks);
* the same sequence again under ``tracemalloc``: what the registry and the tail view hold, by file:line
  (the ``--top`` largest), and each render's traced peak above what was held before it.

    .venv/bin/python -m bench.metrics_memory --topics 200 --groups 2000 --per-group 25   # 20k / 50k

Prints the figures and writes them to bench/results/metrics_memory.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.api_metrics import CLUSTER, fleet_arguments, moved, observations, reset_peak, seed, status_mb
from collectors.codec.records import OffsetCommit
from collectors.model import CommittedObservation
from collectors.tail_committed import TailCommitted
from collectors.tail_model import TailEvent
from service import memory
from service.metrics import ClusterInputs, MetricsOptions, ScrapeInputs, build_registry, render
from store import Store
from store.settings import StoreSettings

RESULTS = Path(__file__).resolve().parent / "results"
MB = 1024 * 1024
ROOT = str(Path(__file__).resolve().parent.parent) + "/"


def tail_view(committed: CommittedObservation) -> TailCommitted:
    """A tail view seeded by ``committed`` as a poll, then told each of its offsets again by the tail."""
    view = TailCommitted(CLUSTER)
    view.apply_poll(committed, 0)
    view.apply(
        TailEvent(
            CLUSTER,
            0,
            n,
            1_000,
            OffsetCommit(1, o.group, o.topic, o.partition, 3, o.offset, None, "", 0, None, None),
        )
        for n, o in enumerate(committed.offsets)
    )
    return view


def sequence(
    store: Store, inputs: ClusterInputs, now: float, runs: int, measure: Any
) -> tuple[Any, list[float], list[float]]:
    """A registry of the default families rendering ``1 + runs`` scrapes (the first, then 1 % moved each);
    ``measure(render)`` -> (peak over before, CPU s) of one render. The registry is returned alive."""
    state: dict[str, Any] = {"inputs": inputs, "now": now}
    options = MetricsOptions(families=frozenset({"offsetguard"}))
    registry = build_registry(
        lambda: ScrapeInputs(clusters=[state["inputs"]], log_end_times=store),
        clock=lambda: state["now"],
        options=options,
    )
    peaks, cpu = [], []
    for cycle in range(runs + 1):
        if cycle:
            state["inputs"] = moved(state["inputs"], 0.01, 15.0, cycle)
            state["now"] += 15
            store.record_offsets(state["inputs"].offsets)
        peak, spent = measure(lambda: render(registry, accept_encoding="gzip"))
        peaks.append(round(peak, 1))
        cpu.append(round(spent, 3))
        memory.trim()
    return registry, peaks, cpu


def rss_render(fn: Any) -> tuple[float, float]:
    before = status_mb("VmRSS:")
    reset_peak()
    t0 = time.process_time()
    fn()
    spent = time.process_time() - t0
    return status_mb("VmHWM:") - before, spent


def traced_render(fn: Any) -> tuple[float, float]:
    before = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    t0 = time.process_time()
    fn()
    spent = time.process_time() - t0
    return (tracemalloc.get_traced_memory()[1] - before) / MB, spent


def where(stat: tracemalloc.Statistic | tracemalloc.StatisticDiff) -> str:
    frame = stat.traceback[0]
    return f"{frame.filename.removeprefix(ROOT)}:{frame.lineno}"


def top(snapshot: tracemalloc.Snapshot, n: int) -> list[dict[str, Any]]:
    return [
        {"where": where(s), "mb": round(s.size / MB, 2), "blocks": s.count}
        for s in snapshot.statistics("lineno")[:n]
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    fleet_arguments(parser, runs=4)
    parser.add_argument("--top", type=int, default=16)
    args = parser.parse_args()
    memory.tune_gc()  # as offsetguard serve
    now = time.time()
    rss: dict[str, float] = {"python_and_imports": status_mb("VmRSS:")}
    mark = rss["python_and_imports"]

    def added(name: str) -> None:
        nonlocal mark
        current = status_mb("VmRSS:")
        rss[name] = round(current - mark, 1)
        mark = current

    inputs = observations(args, now)
    added("observations")
    with tempfile.TemporaryDirectory(prefix="og-bench-memory-") as tmp:
        store = Store.open(StoreSettings(path=Path(tmp) / "og.db"))
        try:
            seed(store, inputs, args.history, now)
            added("store_seeded")
            assert isinstance(inputs.committed, CommittedObservation)
            view = tail_view(inputs.committed)
            added("tail_view")
            inputs = dataclasses.replace(inputs, committed=view.observation(now))
            registry, rss_peaks, rss_cpu = sequence(store, inputs, now, args.runs, rss_render)
            added("registry_after_renders")
            del registry, view
            tracemalloc.start(1)
            view = tail_view(inputs.committed)
            view_snap = tracemalloc.take_snapshot()
            registry, traced_peaks, _ = sequence(store, inputs, now + 1_000, args.runs, traced_render)
            held = tracemalloc.take_snapshot().compare_to(view_snap, "lineno")
            tracemalloc.stop()
            del registry, view  # alive until the snapshot
        finally:
            store.close()
    held_top = [
        {"where": where(s), "mb": round(s.size_diff / MB, 2), "blocks": s.count_diff}
        for s in held[: args.top]
    ]
    result = {
        "benchmark": "metrics_memory",
        "when": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "setup": dict(vars(args)),
        "rss_added_mb": rss,
        "render_peak_over_before_mb": {"first": rss_peaks[0], "moved_1pct": rss_peaks[1:]},
        "render_cpu_s": {"first": rss_cpu[0], "moved_1pct": rss_cpu[1:]},
        "traced": {
            "tail_view_mb": round(sum(s.size for s in view_snap.statistics("filename")) / MB, 1),
            "tail_view_top": top(view_snap, 6),
            "registry_held_top": held_top,
            "render_peak_over_held_mb": {"first": traced_peaks[0], "moved_1pct": traced_peaks[1:]},
        },
    }
    print(json.dumps(result, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "metrics_memory.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
