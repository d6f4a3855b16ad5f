"""The service while the store refuses writes: ``/readyz`` not ready, naming the reason and the store's
figures, ready again once a write commits; a collector's run still succeeds and feeds detection."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from collectors.errors import StoreWriteError
from collectors.model import OffsetsObservation
from service.app import create_app
from service.runtime import Runtime
from service.scheduler import CollectorJob
from service.settings import Settings, load_settings
from service.state import LatestObservations
from service.wiring import store_sink
from store import Store
from store.settings import StoreSettings
from tests.alerts.builders import offsets


def test_readyz_store_refusing_writes_not_ready_then_ready(tmp_path: Path) -> None:
    with Store.open(StoreSettings(path=tmp_path / "og.db")) as store:
        store.health.settle_seconds = 0.0  # healthy at the first write that commits

        def factory(settings: Settings) -> Runtime:
            return Runtime(settings, store=store, latest=LatestObservations(), jobs=[])

        client = TestClient(create_app(load_settings(), runtime_factory=factory))
        with client:
            store._writer.execute(
                "PRAGMA query_only = ON"
            )  # the seam: the writer refuses, as a read-only file
            with pytest.raises(StoreWriteError):
                store.record_offsets(offsets(time.time(), {("t", 0): (0, 10)}))
            failing = client.get("/readyz")
            store._writer.execute("PRAGMA query_only = OFF")
            store.record_offsets(offsets(time.time(), {("t", 0): (0, 11)}))
            healthy = client.get("/readyz")

    body = failing.json()
    assert failing.status_code == 503
    assert [r for r in body["reasons"] if r.startswith("store failing: SQLITE_READONLY")]
    assert (body["store"]["healthy"], body["store"]["write_failures"]) == (False, 1)
    assert healthy.status_code == 200
    assert healthy.json()["store"]["healthy"] is True


class OffsetsOnce:
    name = "offsets"
    cluster = "c"

    async def collect(self) -> OffsetsObservation:
        return offsets(time.time(), {("t", 0): (0, 10)})


async def test_store_sink_refused_write_run_succeeds_later_sinks_fed(tmp_path: Path) -> None:
    seen: list[object] = []

    async def after(observation: object) -> None:
        seen.append(observation)

    with Store.open(StoreSettings(path=tmp_path / "og.db")) as store:
        store._writer.execute("PRAGMA query_only = ON")  # the seam: the writer refuses, as a read-only file
        job = CollectorJob(OffsetsOnce(), interval=1.0, sinks=[store_sink(store), after])

        ok = await job.run_once()

        assert ok
        assert job.status.failures == 0  # the collector is not stale for the store's sake
        assert len(seen) == 1  # detection, after the store sink, still gets the observation
        assert not store.health.healthy
