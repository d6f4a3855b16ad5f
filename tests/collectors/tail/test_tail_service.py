"""The tail inside the service: /readyz is 503 ("tail:<cluster> catching up") until caught up; wiring."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence

import pytest
from fastapi.testclient import TestClient

from collectors.errors import ConfigError
from collectors.tail import OffsetsTail
from collectors.tail_model import TailEvent
from collectors.tail_sinks import RecentEvents
from service.app import create_app
from service.runtime import Runtime
from service.settings import Settings, load_settings
from service.state import LatestObservations
from service.wiring import build_cluster_tail
from tests.collectors.tail.fakes import FakeLog, commit


class GatedSink(RecentEvents):
    """Holds every batch until ``gate`` is set (from the test thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    async def on_events(self, events: Sequence[TailEvent]) -> None:
        while not self.gate.is_set():
            await asyncio.sleep(0.005)
        await super().on_events(events)


def _client(sink: GatedSink) -> TestClient:
    log = FakeLog({0: [commit(o, "g", "t", 0, o) for o in range(3)], 1: []})

    def factory(settings: Settings) -> Runtime:
        tail = OffsetsTail("c1", log, sink, fetch_timeout_ms=1)
        return Runtime(settings, store=None, latest=LatestObservations(), jobs=[], tails=[tail])

    return TestClient(create_app(load_settings(), runtime_factory=factory))


def _readyz(client: TestClient, want: int) -> dict[str, object]:
    body: dict[str, object] = {}
    for _ in range(200):
        response = client.get("/readyz")
        body = response.json()
        if response.status_code == want:
            return body
        time.sleep(0.01)
    raise AssertionError(f"/readyz never answered {want}: {body}")


def test_readyz_tail_catching_up_not_ready_with_reason() -> None:
    sink = GatedSink()
    with _client(sink) as client:
        body = _readyz(client, 503)
        sink.gate.set()

    assert body["ready"] is False
    assert body["reasons"] == ["tail:c1 catching up"]
    tail = body["tail"]
    assert isinstance(tail, list) and tail[0]["cluster"] == "c1" and tail[0]["caught_up"] is False


def test_readyz_tail_caught_up_ready_with_figures() -> None:
    sink = GatedSink()
    sink.gate.set()
    with _client(sink) as client:
        body = _readyz(client, 200)

    assert body["reasons"] == []
    tail = body["tail"]
    assert isinstance(tail, list)
    assert (tail[0]["caught_up"], tail[0]["events_total"], tail[0]["lag_total"]) == (True, 3, 0)
    assert sink.stats()["by_kind"] == {"OffsetCommit": 3}


def test_build_cluster_tail_settings_applied_with_recent_events_sink() -> None:
    settings = load_settings(
        clusters=[{"name": "prod", "bootstrap_servers": "127.0.0.1:9092"}],
        tail={"start_from": "latest", "checkpoint_seconds": 7, "max_batch_records": 123},
    )

    tail = build_cluster_tail(settings.clusters[0], settings, store=None, consumer=FakeLog({}))

    assert (tail.cluster, tail._start_from, tail._checkpoint_s, tail._max_batch) == ("prod", "latest", 7, 123)
    assert isinstance(tail.sink, RecentEvents)


def test_build_cluster_tail_batch_interval_from_settings() -> None:
    cluster = {"name": "prod", "bootstrap_servers": "127.0.0.1:9092"}
    default = load_settings(clusters=[cluster])
    off = load_settings(clusters=[cluster], tail={"batch_interval_seconds": 0})

    tails = [build_cluster_tail(s.clusters[0], s, store=None, consumer=FakeLog({})) for s in (default, off)]

    assert [t._interval_s for t in tails] == [0.25, 0.0]


def test_load_settings_negative_batch_interval_refused_naming_field() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(tail={"batch_interval_seconds": -1})
    assert caught.value.field == "tail.batch_interval_seconds"
