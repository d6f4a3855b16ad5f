"""The runtime with a leadership (ha on): two runtimes on one store file, the first active and the second
standby; /readyz and /metrics say who is active; the active one's writers start and stop with the role."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.exposition import generate_latest

from service.detection.loop import DetectionLoop
from service.ha import ActiveWriters, Leadership
from service.metrics.collector import build_registry
from service.metrics.sources import inputs_from_runtime
from service.runtime import Runtime
from service.scheduler import CollectorJob
from service.settings import DetectionSettings, Settings
from service.state import LatestObservations
from store.alerts import AlertStore
from store.db import connect
from store.lease import Lease
from store.settings import StoreSettings
from tests.service.test_scheduler import FakeCollector


@pytest.fixture
def path(tmp_path: Path) -> Iterator[Path]:
    file = tmp_path / "og.db"
    AlertStore.open(StoreSettings(path=file)).close()
    yield file


def _runtime(path: Path, name: str) -> tuple[Runtime, DetectionLoop, AlertStore]:
    alerts = AlertStore.open(StoreSettings(path=path))
    leadership = Leadership(Lease(lambda: connect(path), name, 10.0), renew_seconds=2.0)
    detection = DetectionLoop("c1", DetectionSettings(), latest=LatestObservations(), alerts=alerts)
    job = CollectorJob(FakeCollector("offsets"), interval=60)
    settings = Settings(ha={"enabled": True, "replica_id": name})
    runtime = Runtime(
        settings,
        store=None,
        latest=LatestObservations(),
        jobs=[job],
        detections=[detection],
        leadership=leadership,
    )
    leadership.writers = ActiveWriters(
        tails=runtime.tails, make_tails=[], detections=[detection], notifier=None
    )
    return runtime, detection, alerts


def _leader_lines(runtime: Runtime) -> list[str]:
    text = generate_latest(build_registry(lambda: inputs_from_runtime(runtime))).decode()
    return [line for line in text.splitlines() if line.startswith("offsetguard_leader")]


async def test_runtime_ha_first_active_second_standby_readyz_and_metrics_say_so(path: Path) -> None:
    a, a_detection, a_alerts = _runtime(path, "a")
    b, b_detection, b_alerts = _runtime(path, "b")
    await a.start()
    await b.start()
    try:
        assert a_detection._task is not None and b_detection._task is None  # detection runs on a only
        ready_a, ready_b = a.readiness(0.0), b.readiness(0.0)
        assert ready_a["leader"] | {"lease_seconds": None} == {
            "role": "active", "replica": "a", "holder": "a", "epoch": 1,
            "lease_seconds": None, "promotions": 1, "step_downs": 0,
        }  # fmt: skip
        assert (ready_b["leader"]["role"], ready_b["leader"]["holder"]) == ("standby", "a")
        assert 'offsetguard_leader{replica="a"} 1.0' in _leader_lines(a)
        assert 'offsetguard_leader{replica="b"} 0.0' in _leader_lines(b)
        assert 'offsetguard_leader_epoch{replica="b"} 1.0' in _leader_lines(b)
    finally:
        await a.stop()
        a_alerts.close()
    await b.leadership.run_once()  # type: ignore[union-attr]  # a released the lease at its stop
    try:
        assert b.readiness(0.0)["leader"]["role"] == "active"
        assert b_detection._task is not None
    finally:
        await b.stop()
        b_alerts.close()
    saved = AlertStore.open(StoreSettings(path=path))
    try:
        assert saved.load_state("c1") is not None  # b stopped as the active one: its state saved
    finally:
        saved.close()


def test_runtime_ha_off_readiness_and_metrics_have_no_leader(path: Path) -> None:
    runtime = Runtime(Settings(), store=None, latest=LatestObservations(), jobs=[])
    assert runtime.readiness(0.0)["leader"] is None
    assert _leader_lines(runtime) == []
