"""The runtime's start order: the collectors and the server first, detection once they have run."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from alerts.state import CommitKey
from collectors.model import CommittedObservation, CommittedOffset
from collectors.settings import ClusterSettings
from collectors.tail import OffsetsTail
from collectors.tail_sinks import RecentEvents
from service.detection.loop import DetectionLoop
from service.detection.tail_sink import DetectionTailSink
from service.held_writes import HeldWrites
from service.runs import FIRST_PICTURE
from service.runtime import Runtime
from service.scheduler import CollectorJob
from service.settings import DetectionSettings, Settings
from service.state import LatestObservations
from service.wiring import build_cluster_jobs
from store.alert_records import RESOLVED, AlertWrite
from store.alerts import AlertStore
from store.settings import StoreSettings
from tests.collectors.fakes import FakeSeam
from tests.collectors.tail.fakes import FakeLog, commit
from tests.service.test_scheduler import FakeCollector
from tests.store.test_store_alert_retention import _alert


@pytest.fixture
def alerts(tmp_path: Path) -> Iterator[AlertStore]:
    with AlertStore.open(StoreSettings(path=tmp_path / "og.db")) as opened:
        yield opened


def _runtime(alerts: AlertStore, delay: float) -> tuple[Runtime, DetectionLoop]:
    detection = DetectionLoop("c1", DetectionSettings(), latest=LatestObservations(), alerts=alerts)
    job = CollectorJob(FakeCollector("offsets", delay=delay), interval=60)
    runtime = Runtime(Settings(), store=None, latest=LatestObservations(), jobs=[job], detections=[detection])
    return runtime, detection


async def test_runtime_detection_launched_once_the_first_collections_are_in(alerts: AlertStore) -> None:
    runtime, detection = _runtime(alerts, delay=0.3)
    await runtime.start()
    try:
        assert detection._task is None  # the collector is still running: detection waits
        deadline = asyncio.get_running_loop().time() + 5
        while detection._task is None:
            assert asyncio.get_running_loop().time() < deadline, "detection never launched"
            await asyncio.sleep(0.02)
        assert runtime.scheduler.jobs[0].status.last_success_at is not None
    finally:
        await runtime.stop()


async def test_runtime_stopped_before_detection_launched_keeps_its_saved_state(alerts: AlertStore) -> None:
    alerts.save_state("c1", "{}", 3, 1.0)
    runtime, detection = _runtime(alerts, delay=5.0)
    await runtime.start()
    await asyncio.sleep(0.3)  # long enough for a launch, not for the first collection
    await runtime.stop()
    assert detection._task is None
    saved = alerts.load_state("c1")
    assert saved is not None and (saved.body, saved.saved_at) == ("{}", 1.0)


async def _launched(detection: DetectionLoop, within: float) -> bool:
    deadline = asyncio.get_running_loop().time() + within
    while detection._task is None:
        if asyncio.get_running_loop().time() >= deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def test_runtime_detection_launched_after_before_detection_returned(alerts: AlertStore) -> None:
    runtime, detection = _runtime(alerts, delay=0.1)
    pictured = asyncio.Event()
    await runtime.start(before_detection=pictured.wait)
    try:
        assert not await _launched(detection, 0.5)  # first collections in, the first picture not yet
        pictured.set()
        assert await _launched(detection, 5.0)
    finally:
        await runtime.stop()


async def test_runtime_detection_launched_at_the_wait_limit_if_before_detection_never_returns(
    alerts: AlertStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("service.runtime.DETECTION_LAUNCH_WAIT_S", 0.5)
    runtime, detection = _runtime(alerts, delay=0.1)
    await runtime.start(before_detection=asyncio.Event().wait)
    try:
        assert await _launched(detection, 5.0)
    finally:
        await runtime.stop()


async def test_runtime_detection_launched_when_before_detection_fails(alerts: AlertStore) -> None:
    async def broken() -> None:
        raise RuntimeError("the render worker is gone")

    runtime, detection = _runtime(alerts, delay=0.1)
    await runtime.start(before_detection=broken)
    try:
        assert await _launched(detection, 5.0)
    finally:
        await runtime.stop()


async def test_runtime_start_collecting_collects_without_detection_start_adds_it_once(
    alerts: AlertStore,
) -> None:
    runtime, detection = _runtime(alerts, delay=0.0)
    await runtime.start_collecting()
    try:
        job = runtime.scheduler.jobs[0]
        deadline = asyncio.get_running_loop().time() + 5
        while job.status.last_success_at is None:
            assert asyncio.get_running_loop().time() < deadline, "the collector never ran"
            await asyncio.sleep(0.02)
        assert not await _launched(detection, 0.3)  # collecting only: no detection yet
        await runtime.start()
        assert await _launched(detection, 5.0)
        assert job.status.runs == 1  # the collectors were not started a second time
    finally:
        await runtime.stop()


async def test_runtime_stop_twice_closes_once_and_started_again_stops_again(alerts: AlertStore) -> None:
    closed: list[int] = []
    job = CollectorJob(FakeCollector("offsets"), interval=60)
    runtime = Runtime(
        Settings(), store=None, latest=LatestObservations(), jobs=[job], closers=[lambda: closed.append(1)]
    )
    await runtime.start()
    await runtime.stop()
    await runtime.stop()
    assert closed == [1]
    await runtime.start()
    await runtime.stop()
    assert closed == [1, 1]


async def test_runtime_tails_start_once_the_first_picture_collections_are_in() -> None:
    committed = FakeCollector("committed", delay=0.3)
    configs = FakeCollector("configs", delay=2.0)  # not shown by the first picture: not waited for
    tail = OffsetsTail("c1", FakeLog({0: [commit(0, "g", "t", 0, 5)]}), RecentEvents(), fetch_timeout_ms=1)
    jobs = [CollectorJob(committed, interval=60), CollectorJob(configs, interval=300)]
    runtime = Runtime(Settings(), store=None, latest=LatestObservations(), jobs=jobs, tails=[tail])
    await runtime.start()
    try:
        await asyncio.sleep(0.1)
        assert committed.calls == 1 and tail.state == "starting"  # the collection runs alone
        deadline = asyncio.get_running_loop().time() + 5
        while not tail.caught_up:
            assert asyncio.get_running_loop().time() < deadline, "the tail never started"
            await asyncio.sleep(0.02)
        assert runtime.scheduler.jobs[0].status.last_success_at is not None
        assert runtime.scheduler.jobs[1].status.last_success_at is None
    finally:
        await runtime.stop()
    assert tail.state == "stopped"


async def test_runtime_store_writes_held_until_the_first_picture_is_served_then_flushed_at_stop() -> None:
    """As ``offsetguard serve`` starts it: collecting first, the app's start (with its first complete
    render) later. The store's writes wait for that render; the collector's run does not."""
    written: list[object] = []

    async def write(observation: object) -> None:
        written.append(observation)

    held = HeldWrites(write)
    job = CollectorJob(FakeCollector("committed"), interval=60, sinks=[held])
    runtime = Runtime(Settings(), store=None, latest=LatestObservations(), jobs=[job], held=[held])
    await runtime.start_collecting()
    try:
        assert await runtime.scheduler.first_round(5.0)
        await asyncio.sleep(0.2)
        assert written == [] and held.held == 1  # the app has not started: its render is not known
        pictured = asyncio.Event()
        await runtime.start(before_detection=pictured.wait)
        await asyncio.sleep(0.2)
        assert written == []
        pictured.set()
        deadline = asyncio.get_running_loop().time() + 5
        while not written:
            assert asyncio.get_running_loop().time() < deadline, "the held write never came"
            await asyncio.sleep(0.02)
        assert len(written) == 1 and held.held == 0
    finally:
        await runtime.stop()
    # never served: the stop writes what is held before the store closes
    unserved = HeldWrites(write)
    again = CollectorJob(FakeCollector("committed"), interval=60, sinks=[unserved])
    runtime = Runtime(Settings(), store=None, latest=LatestObservations(), jobs=[again], held=[unserved])
    await runtime.start(before_detection=asyncio.Event().wait)
    assert await runtime.scheduler.first_round(5.0)
    assert unserved.held == 1
    await runtime.stop()
    assert unserved.held == 0 and len(written) == 2


async def test_runtime_alert_prune_scheduled_hourly_and_deletes_past_retention(alerts: AlertStore) -> None:
    old = _alert("old", started=time.time() - 100 * 86400.0)
    done = replace(old, status=RESOLVED, resolved_at=old.started_at + 60)
    alerts.update_firing("c1", lambda firing, resolved: [AlertWrite(done, True, "resolved")], done.updated_at)
    runtime = Runtime(Settings(), store=None, latest=LatestObservations(), jobs=[], alerts=alerts)
    [(name, every, task)] = runtime.scheduler.maintenance
    assert (name, every) == ("store:prune_alerts", 3600.0)
    await task()
    assert alerts.get("old") is None


async def test_runtime_broker_metrics_and_configs_run_after_the_first_picture(alerts: AlertStore) -> None:
    """The wiring's broker-metrics and configs jobs come after the first-picture collectors; the runtime
    makes them wait for ``before_detection`` (the first complete /metrics) too."""
    cluster = ClusterSettings(name="c1", bootstrap_servers=["127.0.0.1:1"], metrics_urls=[EXPORTER])
    settings = Settings(clusters=[cluster])
    jobs, close = build_cluster_jobs(
        settings.clusters[0], settings, LatestObservations(), None, seam=FakeSeam()
    )
    metrics = next(j for j in jobs if j.collector.name == "broker_metrics")
    configs = next(j for j in jobs if j.collector.name == "configs")
    assert metrics.after == configs.after == FIRST_PICTURE
    scrapes: list[str] = []

    def fetch(url: str, timeout: float) -> str:
        scrapes.append(url)
        return ""  # no family: a failed scrape, a run all the same

    metrics.collector._fetch = fetch  # type: ignore[attr-defined]
    runtime = Runtime(
        settings, store=None, latest=LatestObservations(), jobs=jobs, detections=[], closers=[close]
    )
    pictured = asyncio.Event()
    await runtime.start(before_detection=pictured.wait)
    try:
        assert await runtime.scheduler.first_round(5.0, FIRST_PICTURE)
        await asyncio.sleep(0.3)
        assert scrapes == [] and configs.status.runs == 0
        pictured.set()
        assert await runtime.scheduler.first_round(5.0, ("broker_metrics", "configs"))
        assert scrapes == [EXPORTER]
    finally:
        await runtime.stop()
    assert metrics.collector._threads is None  # type: ignore[attr-defined]  # closed with the seam


EXPORTER = "http://127.0.0.1:9/metrics"


async def test_runtime_stop_evaluates_the_last_commits_and_a_poll_with_the_tail_as_it_was(
    alerts: AlertStore,
) -> None:
    # The tail reads a commit of 4 (stamped by the broker at t - 0.3); a committed poll observed at t still
    # answers 1 (the broker had stamped the commit, not yet made it fetchable). Both are evaluated at stop,
    # after the tail stopped: the tail was live when the poll was taken, so the poll only seeds, and no
    # rewind 4 -> 1 is reported (b20t's cold run: 25 such "admin_reset" rewinds at its stop).
    latest = LatestObservations()
    # after the first evaluation none before the stop's: the commit and the poll are judged at stop
    settings = DetectionSettings(min_evaluation_interval_seconds=60)
    detection = DetectionLoop("c1", settings, latest=latest, alerts=alerts)
    t = time.time()
    log = FakeLog({0: [commit(0, "g", "t", 0, 1, ts=int((t - 60) * 1000))]})
    tail = OffsetsTail("c1", log, DetectionTailSink(detection), fetch_timeout_ms=1)
    detection.tail_live = tail.live
    runtime = Runtime(Settings(), store=None, latest=latest, jobs=[], detections=[detection], tails=[tail])
    key = CommitKey("g", "t", 0)
    await runtime.start()
    try:
        deadline = asyncio.get_running_loop().time() + 5
        while key not in detection.state.commits or not tail.live():
            assert asyncio.get_running_loop().time() < deadline, "the first commit never evaluated"
            await asyncio.sleep(0.02)
        t = time.time()
        log.append(0, commit(1, "g", "t", 0, 4, ts=int((t - 0.3) * 1000)))
        while tail.delivered.get(0) != 2:
            assert asyncio.get_running_loop().time() < deadline, "the tail never delivered the commit"
            await asyncio.sleep(0.02)
        await latest.put(CommittedObservation("c1", t, (CommittedOffset("g", "t", 0, 1, None),), ("g",)))
    finally:
        await runtime.stop()
    assert [a.kind for a in alerts.list().alerts] == []
    assert detection.state.commits[key].offset == 4
