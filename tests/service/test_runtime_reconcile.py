"""build_runtime wires the tail-fed committed offsets: one reconciler per cluster with a tail, its view among
the tail's sinks and its committed collector answering from it; none without a tail; a fresh tail per ha
promotion re-attached (seeded anew). Nothing connects: the runtimes are never started."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from collectors.committed import CommittedCollector
from service.detection import FanOutSink
from service.ha import ActiveWriters
from service.runtime import Runtime, build_runtime
from service.settings import load_settings


def _settings(tmp_path: Path, **extra: Any) -> Any:
    return load_settings(
        clusters=[
            {"name": "c1", "bootstrap_servers": "127.0.0.1:1"},
            {"name": "c2", "bootstrap_servers": "127.0.0.1:1"},
        ],
        store={"path": str(tmp_path / "og.db")},
        **extra,
    )


def _committed(runtime: Runtime, cluster: str) -> CommittedCollector:
    [collector] = [
        j.collector
        for j in runtime.scheduler.jobs
        if j.collector.cluster == cluster and isinstance(j.collector, CommittedCollector)
    ]
    return collector


def test_build_runtime_tail_on_committed_collector_fed_by_its_tail(tmp_path: Path) -> None:
    runtime = build_runtime(_settings(tmp_path, intervals={"reconcile": 90}))
    try:
        assert [r.cluster for r in runtime.reconcilers] == ["c1", "c2"]
        for reconciler, tail in zip(runtime.reconcilers, runtime.tails, strict=True):
            assert reconciler.tail is tail and reconciler.every == 90
            assert isinstance(tail.sink, FanOutSink) and reconciler.view in tail.sink.sinks
            assert _committed(runtime, reconciler.cluster).reconciler is reconciler
        [entry, _] = runtime.readiness(0.0)["reconcile"]
        assert (entry["cluster"], entry["source"], entry["seeded"], entry["runs"]) == ("c1", "poll", False, 0)
    finally:
        asyncio.run(runtime.stop())


def test_build_runtime_tail_off_committed_collector_polls_as_before(tmp_path: Path) -> None:
    runtime = build_runtime(_settings(tmp_path, tail={"enabled": False}))
    try:
        assert runtime.reconcilers == [] and runtime.tails == []
        assert _committed(runtime, "c1").reconciler is None
        assert runtime.readiness(0.0)["reconcile"] == []
    finally:
        asyncio.run(runtime.stop())


def test_build_runtime_ha_each_promotion_tail_attached_unseeded(tmp_path: Path) -> None:
    runtime = build_runtime(_settings(tmp_path, ha={"enabled": True, "replica_id": "r1"}))
    try:
        assert runtime.tails == [] and all(r.tail is None for r in runtime.reconcilers)  # standby: polls
        writers = runtime.leadership.writers if runtime.leadership is not None else None
        assert isinstance(writers, ActiveWriters)
        first = [make() for make in writers._make_tails]
        second = [make() for make in writers._make_tails]
        assert [r.tail for r in runtime.reconcilers] == second != first
        assert not any(r.seeded for r in runtime.reconcilers)
    finally:
        asyncio.run(runtime.stop())
