import asyncio
from dataclasses import dataclass
from pathlib import Path

from fastapi.testclient import TestClient

from collectors.errors import KafkaUnavailableError
from service.app import create_app
from service.detection.loop import DetectionLoop
from service.runtime import Runtime
from service.scheduler import CollectorJob
from service.settings import DetectionSettings, Settings, load_settings
from service.state import LatestObservations
from store.alerts import AlertStore
from store.settings import StoreSettings


@dataclass(frozen=True)
class Obs:
    cluster: str


class FakeCollector:
    def __init__(self, name: str, fail: bool = False) -> None:
        self.name = name
        self.cluster = "c1"
        self.fail = fail

    async def collect(self) -> Obs:
        if self.fail:
            raise KafkaUnavailableError("no broker")
        return Obs("c1")


def _app(*collectors: FakeCollector) -> tuple[TestClient, LatestObservations]:
    latest = LatestObservations()

    def factory(settings: Settings) -> Runtime:
        jobs = [CollectorJob(c, interval=0.05, sinks=[latest.put]) for c in collectors]
        return Runtime(settings, store=None, latest=latest, jobs=jobs)

    return TestClient(create_app(load_settings(), runtime_factory=factory)), latest


def _wait_ready(client: TestClient, want: int) -> dict[str, object]:
    body: dict[str, object] = {}
    for _ in range(60):
        response = client.get("/readyz")
        body = response.json()
        if response.status_code == want:
            return body
        asyncio.run(asyncio.sleep(0.05))
    raise AssertionError(f"/readyz never answered {want}: {body}")


def test_healthz_running_service_ok() -> None:
    client, _ = _app(FakeCollector("metadata"))
    with client:
        assert client.get("/healthz").json() == {"status": "ok"}


def test_readyz_all_collectors_succeeded_ready() -> None:
    client, latest = _app(FakeCollector("metadata"), FakeCollector("offsets"))
    with client:
        body = _wait_ready(client, 200)
    assert body["ready"] is True
    assert body["stale"] == []
    assert latest.get("c1", Obs) == Obs("c1")


def test_readyz_failing_collector_names_it_stale() -> None:
    client, _ = _app(FakeCollector("metadata"), FakeCollector("offsets", fail=True))
    with client:
        body = _wait_ready(client, 503)
    assert body["ready"] is False
    assert body["stale"] == ["c1:offsets"]


def test_readyz_shows_each_reconciler_source_and_differences() -> None:
    from collectors.reconcile import Reconciler
    from collectors.tail_committed import TailCommitted

    latest = LatestObservations()
    reconciler = Reconciler(TailCommitted("c1"), 60.0)

    def factory(settings: Settings) -> Runtime:
        jobs = [CollectorJob(FakeCollector("metadata"), interval=0.05, sinks=[latest.put])]
        return Runtime(settings, store=None, latest=latest, jobs=jobs, reconcilers=[reconciler])

    with TestClient(create_app(load_settings(), runtime_factory=factory)) as client:
        body = _wait_ready(client, 200)
    entries = body["reconcile"]
    assert isinstance(entries, list) and len(entries) == 1
    assert {k: entries[0][k] for k in ("cluster", "source", "differences")} == {
        "cluster": "c1",
        "source": "poll",
        "differences": 0,
    }


def test_app_detection_saves_wait_for_the_metrics_endpoints_quiet(tmp_path: Path) -> None:
    with AlertStore.open(StoreSettings(path=tmp_path / "og.db")) as alerts:
        detection = DetectionLoop("c1", DetectionSettings(), latest=LatestObservations(), alerts=alerts)

        def factory(settings: Settings) -> Runtime:
            return Runtime(settings, store=None, latest=LatestObservations(), jobs=[], detections=[detection])

        app = create_app(load_settings(), runtime_factory=factory)
        with TestClient(app):
            assert detection.metrics_quiet_for == app.state.metrics.quiet_for
