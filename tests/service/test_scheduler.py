import asyncio
import logging
import time
from dataclasses import dataclass

import pytest

from collectors.errors import KafkaAuthError, KafkaUnavailableError
from collectors.model import Failure
from service import scheduler as scheduler_module
from service.runs import has_run
from service.scheduler import CollectorJob, CollectorStatus, Scheduler


@dataclass(frozen=True)
class Obs:
    cluster: str
    failures: tuple[Failure, ...] = ()


class FakeCollector:
    def __init__(self, name: str, *, fail: Exception | None = None, delay: float = 0.0) -> None:
        self.name = name
        self.cluster = "c1"
        self.fail = fail
        self.delay = delay
        self.calls = 0
        self.failures: tuple[Failure, ...] = ()

    async def collect(self) -> Obs:
        self.calls += 1
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.fail is not None:
            raise self.fail
        return Obs("c1", self.failures)


async def test_run_once_collector_fails_counts_and_keeps_error() -> None:
    job = CollectorJob(FakeCollector("offsets", fail=KafkaUnavailableError("broker 2 down")), interval=1)
    assert await job.run_once() is False
    assert job.status.failures == 1
    assert job.status.last_error == "KafkaUnavailableError: broker 2 down"
    assert job.status.last_success_at is None


async def test_run_once_failure_and_crash_logged_with_cluster_and_collector(
    caplog: pytest.LogCaptureFixture,
) -> None:
    failing = CollectorJob(FakeCollector("offsets", fail=KafkaUnavailableError("broker 2 down")), interval=1)
    crashing = CollectorJob(FakeCollector("groups", fail=ValueError("bug")), interval=1)
    with caplog.at_level(logging.WARNING, logger="service.scheduler"):
        await failing.run_once()
        await crashing.run_once()
    context = [(r.levelname, r.cluster, r.collector) for r in caplog.records]  # type: ignore[attr-defined]
    assert context == [("WARNING", "c1", "offsets"), ("ERROR", "c1", "groups")]


async def test_run_once_unexpected_exception_does_not_escape() -> None:
    job = CollectorJob(FakeCollector("groups", fail=ValueError("bug")), interval=1)
    assert await job.run_once() is False
    assert job.status.last_error == "ValueError: bug"


async def test_run_once_success_feeds_every_sink() -> None:
    seen: list[object] = []

    async def sink(observation: object) -> None:
        seen.append(observation)

    job = CollectorJob(FakeCollector("metadata"), interval=1, sinks=[sink, sink], clock=lambda: 100.0)
    assert await job.run_once() is True
    assert seen == [Obs("c1"), Obs("c1")]
    assert job.status.last_success_at == 100.0


async def test_run_once_sink_failure_is_a_failed_run() -> None:
    async def broken_sink(observation: object) -> None:
        raise KafkaUnavailableError("store gone")

    job = CollectorJob(FakeCollector("metadata"), interval=1, sinks=[broken_sink])
    assert await job.run_once() is False
    assert job.status.failures == 1


async def test_run_once_overlapping_call_is_skipped() -> None:
    collector = FakeCollector("committed", delay=0.2)
    job = CollectorJob(collector, interval=1)
    results = await asyncio.gather(job.run_once(), job.run_once())
    assert sorted(results) == [False, True]
    assert collector.calls == 1
    assert job.status.skipped_overlaps == 1


def test_status_stale_after_intervals() -> None:
    status = CollectorStatus("offsets", "c1", interval=5.0, last_success_at=100.0)
    assert not status.stale(now=114.9, stale_after_intervals=3)
    assert status.stale(now=115.1, stale_after_intervals=3)
    assert CollectorStatus("offsets", "c1", interval=5.0).stale(now=0.0, stale_after_intervals=3)


async def test_scheduler_failing_collector_does_not_stop_the_others() -> None:
    good = FakeCollector("metadata")
    bad = FakeCollector("offsets", fail=KafkaUnavailableError("down"))
    scheduler = Scheduler([CollectorJob(good, interval=0.05), CollectorJob(bad, interval=0.05)])
    scheduler.start()
    try:
        await asyncio.sleep(0.4)
    finally:
        await scheduler.shutdown()
    assert good.calls >= 3
    assert bad.calls >= 3
    statuses = {s.name: s for s in scheduler.statuses()}
    assert statuses["metadata"].failures == 0
    assert statuses["offsets"].failures == bad.calls
    stale_names = [s.name for s in scheduler.stale(now=statuses["metadata"].last_success_at or 0)]
    assert stale_names == ["offsets"]


HIDDEN = Failure("group", "billing", KafkaAuthError.__name__, "broker answered GROUP_AUTHORIZATION_FAILED")
SLOW = Failure("group", "audit", "KafkaTimeoutError", "timed out")


async def test_run_once_partial_failures_named_in_status_and_logged_once_per_change(
    caplog: pytest.LogCaptureFixture,
) -> None:
    collector = FakeCollector("committed")
    job = CollectorJob(collector, interval=1)
    collector.failures = (HIDDEN, SLOW)
    with caplog.at_level(logging.INFO, logger="service.scheduler"):
        for _ in range(3):  # an ACL hides the group every cycle: one line, not three
            assert await job.run_once() is True
        collector.failures = ()
        assert await job.run_once() is True
    assert [r.getMessage() for r in caplog.records] == [
        "collector c1:committed cannot observe group:audit: KafkaTimeoutError, group:billing: not authorized",
        "collector c1:committed observes everything again",
    ]
    collector.failures = (HIDDEN,)
    await job.run_once()
    shown = job.status.as_dict(now=0.0, stale_after_intervals=3)
    assert (shown["partial_failures"], shown["unobserved"]) == (1, ["group:billing: not authorized"])


async def test_run_once_partial_streak_counts_consecutive_partial_runs_a_clean_run_resets_it() -> None:
    collector = FakeCollector("configs")
    job = CollectorJob(collector, interval=1)
    streaks = []
    for failures in ((SLOW,), (SLOW,), (), (HIDDEN,)):
        collector.failures = failures
        await job.run_once()
        streaks.append(job.status.partial_streak)
    assert streaks == [1, 2, 0, 1]


async def test_first_round_waits_for_every_collector_success_or_failure() -> None:
    slow = CollectorJob(FakeCollector("committed", delay=0.3), interval=60)
    failing = CollectorJob(FakeCollector("offsets", fail=KafkaUnavailableError("down")), interval=60)
    scheduler = Scheduler([slow, failing])
    scheduler.start()
    try:
        t0 = asyncio.get_running_loop().time()
        assert await scheduler.first_round(timeout=5.0) is True
        assert asyncio.get_running_loop().time() - t0 >= 0.25  # waited for the slow one
        assert slow.status.last_success_at is not None and failing.status.last_failure_at is not None
    finally:
        await scheduler.shutdown()


async def test_first_round_gives_up_after_timeout() -> None:
    scheduler = Scheduler([CollectorJob(FakeCollector("groups", delay=5.0), interval=60)])
    scheduler.start()
    try:
        assert await scheduler.first_round(timeout=0.2) is False
    finally:
        await scheduler.shutdown(timeout=0.1)


class Blocking:
    """A collector (or maintenance task) whose run waits on ``release``; ``done`` counts finished runs."""

    def __init__(self) -> None:
        self.name, self.cluster = "committed", "c1"
        self.failures: tuple[Failure, ...] = ()
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.calls = self.done = 0

    async def collect(self) -> Obs:
        await self.task()
        return Obs("c1")

    async def task(self) -> None:
        self.calls += 1
        self.started.set()
        await self.release.wait()
        self.done += 1


async def test_shutdown_lets_the_runs_in_progress_finish_not_cancelled_and_starts_no_other(
    caplog: pytest.LogCaptureFixture,
) -> None:
    collector, maintenance = Blocking(), Blocking()
    job = CollectorJob(collector, interval=0.05)
    scheduler = Scheduler([job], maintenance=[("thin", 0.05, maintenance.task)])
    scheduler.start()
    await asyncio.wait_for(asyncio.gather(collector.started.wait(), maintenance.started.wait()), 5)
    with caplog.at_level(logging.INFO):
        caplog.clear()  # APScheduler's "skipped: maximum number of running instances" while they block
        stopping = asyncio.ensure_future(scheduler.shutdown(timeout=5.0))
        await asyncio.sleep(0.3)  # six intervals: nothing new may start while the runs finish
        assert not stopping.done()  # it waits for them
        collector.release.set()
        maintenance.release.set()
        await asyncio.wait_for(stopping, 5)
    assert (collector.calls, collector.done, maintenance.calls, maintenance.done) == (1, 1, 1, 1)
    assert job.status.failures == 0 and job.status.last_success_at is not None
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    await asyncio.sleep(0.2)
    assert (collector.calls, maintenance.calls) == (1, 1)  # shut down: no run after


async def test_shutdown_cancels_what_still_runs_after_finish_logged_as_cancelled_not_a_crash(
    caplog: pytest.LogCaptureFixture,
) -> None:
    collector = Blocking()  # a collector waiting on a dead broker
    job = CollectorJob(collector, interval=60)
    scheduler = Scheduler([job])
    scheduler.start()
    await asyncio.wait_for(collector.started.wait(), 5)
    with caplog.at_level(logging.INFO):
        t0 = time.monotonic()
        await asyncio.wait_for(scheduler.shutdown(timeout=30.0, finish=0.2), 30)
        took = time.monotonic() - t0
    assert collector.done == 0 and not job._lock.locked()  # cancelled, and unwound before shutdown returned
    assert took < 10.0  # not held for the whole timeout
    logged = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert ("INFO", "c1:committed: the run in progress was cancelled by the stop") in logged
    assert [m for level, m in logged if level in ("WARNING", "ERROR", "CRITICAL")] == []


async def test_collector_with_after_runs_first_after_those_collectors_then_the_gate() -> None:
    committed = CollectorJob(FakeCollector("committed", delay=0.3), interval=60)
    other_cluster = FakeCollector("committed", delay=5.0)
    other_cluster.cluster = "c2"  # not waited for: another cluster's
    metrics = FakeCollector("broker_metrics")
    deferred = CollectorJob(metrics, interval=60, after=("committed",))
    scheduler = Scheduler([committed, CollectorJob(other_cluster, interval=60), deferred])
    gate = asyncio.Event()

    async def opened() -> None:
        await gate.wait()

    scheduler.gate(opened)
    scheduler.start()
    try:
        await asyncio.sleep(0.15)
        assert metrics.calls == 0  # committed still running
        assert await scheduler.first_round(timeout=5.0, names=("committed",), cluster="c1") is True
        await asyncio.sleep(0.15)
        assert metrics.calls == 0  # the gate is shut
        gate.set()
        assert await scheduler.first_round(timeout=5.0, names=("broker_metrics",)) is True
        assert (
            metrics.calls == 1
            and other_cluster.calls == 1
            and not has_run(next(j for j in scheduler.jobs if j.collector is other_cluster).status)
        )
    finally:
        await scheduler.shutdown(timeout=0.2)


async def test_collector_with_after_runs_anyway_after_the_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scheduler_module, "AFTER_WAIT_S", 0.3)
    metrics = FakeCollector("broker_metrics")
    never = asyncio.Event()

    async def shut() -> None:
        await never.wait()

    for jobs, gate in (([CollectorJob(FakeCollector("offsets", delay=5.0), interval=60)], None), ([], shut)):
        metrics.calls = 0
        scheduler = Scheduler([*jobs, CollectorJob(metrics, interval=60, after=("offsets",))])
        if gate is not None:
            scheduler.gate(gate)  # no offsets collector: the gate alone, shut for good
        scheduler.start()
        try:
            await asyncio.sleep(0.15)
            assert metrics.calls == 0
            assert await scheduler.first_round(timeout=2.0, names=("broker_metrics",)) is True
            assert metrics.calls == 1
        finally:
            await scheduler.shutdown(timeout=0.2)


async def test_stop_before_release_leaves_the_deferred_collector_unrun() -> None:
    metrics = FakeCollector("broker_metrics")
    scheduler = Scheduler(
        [
            CollectorJob(FakeCollector("offsets", delay=5.0), interval=60),
            CollectorJob(metrics, interval=60, after=("offsets",)),
        ]
    )
    scheduler.start()
    await asyncio.sleep(0.05)
    await scheduler.shutdown(timeout=0.2)
    await asyncio.sleep(0.1)
    assert metrics.calls == 0 and all(t.done() for t in scheduler._releasing)
