"""Reading the runtime at scrape time: clusters from settings, statuses, tails and the alert store seam."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from collectors.tail_model import TailFigures
from service.metrics import inputs_from_runtime
from service.runtime import Runtime
from service.settings import load_settings
from service.state import LatestObservations
from tests.service.metrics import builders as b


def _runtime(**extra: Any) -> Runtime:
    latest = LatestObservations()
    for obs in (b.metadata(), b.committed()):
        asyncio.run(latest.put(obs))
    settings = load_settings(
        clusters=[
            {"name": "c1", "bootstrap_servers": ["127.0.0.1:9"]},
            {"name": "c2", "bootstrap_servers": ["127.0.0.1:9"]},
        ]
    )
    runtime = Runtime(settings, store=None, latest=latest, jobs=[])
    for name, value in extra.items():
        setattr(runtime, name, value)
    return runtime


def test_inputs_from_runtime_every_configured_cluster_latest_observations() -> None:
    inputs = inputs_from_runtime(_runtime())
    assert [c.cluster for c in inputs.clusters] == ["c1", "c2"]
    c1, c2 = inputs.clusters
    assert c1.metadata == b.metadata()
    assert c1.committed == b.committed()
    assert c1.offsets is None and c1.groups is None
    assert (c2.metadata, c2.committed) == (None, None)
    assert inputs.stale_after_intervals == 3.0
    assert inputs.log_end_times is None


def test_inputs_from_runtime_alert_store_with_counts_used() -> None:
    alerts = b.FakeAlerts()
    assert inputs_from_runtime(_runtime(alerts=alerts)).alerts is alerts


def test_inputs_from_runtime_alert_store_without_counts_ignored() -> None:
    assert inputs_from_runtime(_runtime(alerts=SimpleNamespace(firing_counts=dict))).alerts is None
    assert inputs_from_runtime(_runtime()).alerts is None


def test_inputs_from_runtime_tail_figures_snapshotted() -> None:
    figures = TailFigures("c1", "running", True, 1, 5, 5, 1.0, {0: 2}, 0, 0, 0, None, None)
    tail = SimpleNamespace(figures=lambda: figures)
    assert list(inputs_from_runtime(_runtime(tails=[tail])).tails) == [figures]


def test_inputs_from_runtime_detection_evaluations_read_at_scrape() -> None:
    detection = SimpleNamespace(cluster="c1", evaluations=3)
    runtime = _runtime(detections=[detection])
    first = inputs_from_runtime(runtime)
    detection.evaluations = 4
    assert (list(first.evaluations), list(inputs_from_runtime(runtime).evaluations)) == (
        [("c1", 3)],
        [("c1", 4)],
    )
    assert list(inputs_from_runtime(_runtime()).evaluations) == []


def test_inputs_from_runtime_reconcilers_read_at_scrape() -> None:
    reconciler = SimpleNamespace(cluster="c1", runs=2, differences=0)
    runtime = _runtime(reconcilers=[reconciler])
    first = inputs_from_runtime(runtime)
    reconciler.runs, reconciler.differences = 3, 1
    assert (list(first.reconciles), list(inputs_from_runtime(runtime).reconciles)) == (
        [("c1", 2, 0)],
        [("c1", 3, 1)],
    )
    assert list(inputs_from_runtime(_runtime()).reconciles) == []


def test_inputs_from_runtime_no_runtime_empty() -> None:
    inputs = inputs_from_runtime(None)
    assert (list(inputs.clusters), list(inputs.statuses), inputs.alerts) == ([], [], None)
