"""Runs every collector on its own interval with APScheduler's ``AsyncIOScheduler``.

A run never overlaps the previous run of the same collector (``max_instances=1``, missed runs
coalesced). A failing collector is logged, counted and — once its last success is older than
``stale_after_intervals`` intervals — reported stale, while every other collector goes on.

Every collector runs first at the start, except one with ``after`` (:attr:`CollectorJob.after`): its
first run waits for the first runs of those collectors of its cluster, then for the gate the runtime set
(:meth:`Scheduler.gate`: the first complete ``/metrics`` render), at most :data:`AFTER_WAIT_S` in all.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from collectors.base import Collector
from collectors.errors import OffsetguardError
from collectors.model import Failure
from service.runs import has_run

log = logging.getLogger(__name__)

Sink = Callable[[Any], Awaitable[None]]
UNOBSERVED_SHOWN = 50  # entries of CollectorStatus.unobserved that /readyz lists
UNOBSERVED_LOGGED = 10  # and that one log line names
FIRST_ROUND_POLL_S = 0.05
# seconds a stop lets the collector runs in progress finish before it cancels them
FINISH_S = 5.0
AFTER_WAIT_S = 10.0  # a collector with ``after`` runs first at most this long after the start


@dataclass(slots=True)
class CollectorStatus:
    """What the scheduler knows of one collector; read by ``/readyz`` and the metrics."""

    name: str
    cluster: str
    interval: float
    runs: int = 0
    failures: int = 0
    skipped_overlaps: int = 0
    last_started_at: float | None = None
    last_success_at: float | None = None
    last_failure_at: float | None = None
    last_error: str | None = None
    last_duration: float | None = None
    partial_failures: int = 0  # Failure entries in the last observation
    partial_streak: int = 0  # consecutive successful runs, up to the last, that had Failure entries
    unobserved: tuple[str, ...] = ()  # what the last observation could not see: "scope:key: Error"

    def stale(self, now: float, stale_after_intervals: float) -> bool:
        """True when the collector never succeeded or its last success is too old."""
        if self.last_success_at is None:
            return True
        return now - self.last_success_at > self.interval * stale_after_intervals

    def as_dict(self, now: float, stale_after_intervals: float) -> dict[str, Any]:
        return {
            "name": self.name,
            "cluster": self.cluster,
            "interval_seconds": self.interval,
            "stale": self.stale(now, stale_after_intervals),
            "runs": self.runs,
            "failures": self.failures,
            "last_success_at": self.last_success_at,
            "last_failure_at": self.last_failure_at,
            "last_error": self.last_error,
            "last_duration_seconds": self.last_duration,
            "partial_failures": self.partial_failures,
            "unobserved": list(self.unobserved[:UNOBSERVED_SHOWN]),
        }


@dataclass(slots=True)
class CollectorJob:
    """One collector, its interval, and where its observations go. ``after``: collectors of the same
    cluster whose first runs (succeeded or failed) come before this one's first run."""

    collector: Collector[Any]
    interval: float
    sinks: list[Sink] = field(default_factory=list)
    clock: Callable[[], float] = time.time
    after: tuple[str, ...] = ()
    status: CollectorStatus = field(init=False)
    _lock: asyncio.Lock = field(init=False, default_factory=asyncio.Lock)

    def __post_init__(self) -> None:
        self.status = CollectorStatus(self.collector.name, self.collector.cluster, self.interval)

    @property
    def job_id(self) -> str:
        return f"{self.collector.cluster}:{self.collector.name}"

    @property
    def _where(self) -> dict[str, str]:
        """The ``extra=`` of its log lines (service.logs)."""
        return {"cluster": self.collector.cluster, "collector": self.collector.name}

    async def run_once(self) -> bool:
        """Collect once and hand the observation to the sinks; True on success. Never raises."""
        if self._lock.locked():  # belt and braces: APScheduler already refuses overlapping runs
            self.status.skipped_overlaps += 1
            return False
        async with self._lock:
            status = self.status
            status.runs += 1
            started = self.clock()
            status.last_started_at = started
            t0 = time.perf_counter()
            try:
                observation = await self.collector.collect()
                for sink in self.sinks:
                    await sink(observation)
            except OffsetguardError as exc:
                return self._failed(exc, t0, expected=True)
            except Exception as exc:  # a bug must not stop the other collectors
                return self._failed(exc, t0, expected=False)
            status.last_duration = time.perf_counter() - t0
            status.last_success_at = started
            self._unobserved(tuple(getattr(observation, "failures", ())))
            return True

    def _unobserved(self, failures: tuple[Failure, ...]) -> None:
        """Record what this run could not see; log it when that changes (a group an ACL hides stays
        hidden every cycle: one line, not one per cycle)."""
        status = self.status
        status.partial_failures = len(failures)
        status.partial_streak = status.partial_streak + 1 if failures else 0
        unobserved = tuple(sorted(f.entry for f in failures))
        if unobserved == status.unobserved:
            return
        status.unobserved = unobserved
        if unobserved:
            shown = ", ".join(unobserved[:UNOBSERVED_LOGGED])
            more = (
                f" and {len(unobserved) - UNOBSERVED_LOGGED} more"
                if len(unobserved) > UNOBSERVED_LOGGED
                else ""
            )
            log.warning("collector %s cannot observe %s%s", self.job_id, shown, more, extra=self._where)
        else:
            log.info("collector %s observes everything again", self.job_id, extra=self._where)

    def _failed(self, exc: BaseException, t0: float, *, expected: bool) -> bool:
        status = self.status
        status.failures += 1
        status.last_failure_at = self.clock()
        status.last_error = f"{type(exc).__name__}: {exc}"
        status.last_duration = time.perf_counter() - t0
        if expected:
            log.warning("collector %s failed: %s", self.job_id, status.last_error, extra=self._where)
        else:
            log.exception("collector %s crashed", self.job_id, exc_info=exc, extra=self._where)
        return False


class Scheduler:
    """Owns the APScheduler instance; start it inside a running event loop (the app lifespan)."""

    def __init__(
        self,
        jobs: Iterable[CollectorJob],
        *,
        stale_after_intervals: float = 3.0,
        maintenance: Iterable[tuple[str, float, Callable[[], Awaitable[None]]]] = (),
    ) -> None:
        self.jobs = list(jobs)
        self.stale_after_intervals = stale_after_intervals
        self.maintenance = list(maintenance)  # (name, interval seconds, task): not collectors, not in /readyz
        self._scheduler: AsyncIOScheduler | None = None
        self._maintaining = 0  # maintenance tasks running
        self._stopping = False  # shutdown is cancelling the runs still in progress
        self._releasing: list[asyncio.Task[None]] = []  # first runs waiting for their ``after``
        self._gate: Callable[[], Awaitable[object]] | None = None

    def start(self) -> None:
        scheduler = AsyncIOScheduler(timezone=UTC)
        now = datetime.now(UTC)
        for job in self.jobs:
            scheduler.add_job(
                self._stoppable(job.job_id, job.run_once),
                "interval",
                seconds=job.interval,
                id=job.job_id,
                max_instances=1,
                coalesce=True,
                misfire_grace_time=max(1, int(job.interval)),
                # first run right away, not one interval later; with ``after``: paused until released
                next_run_time=None if job.after else now,
            )
        for name, interval, task in self.maintenance:
            scheduler.add_job(
                self._logged(name, task),
                "interval",
                seconds=interval,
                id=name,
                max_instances=1,
                coalesce=True,
            )
        scheduler.start()
        self._scheduler = scheduler
        loop = asyncio.get_running_loop()
        self._releasing = [loop.create_task(self._release(job)) for job in self.jobs if job.after]

    def gate(self, wait: Callable[[], Awaitable[object]]) -> None:
        """What a collector with ``after`` also waits for, once those collectors ran (if set by then)."""
        self._gate = wait

    async def _release(self, job: CollectorJob) -> None:
        """Start ``job``'s runs once the collectors it comes after ran and then the gate opened, or
        :data:`AFTER_WAIT_S` after the start."""
        deadline = time.monotonic() + AFTER_WAIT_S
        if not await self.first_round(AFTER_WAIT_S, job.after, cluster=job.collector.cluster):
            log.info("%s runs before %s ran (%.0f s)", job.job_id, ", ".join(job.after), AFTER_WAIT_S)
        elif self._gate is not None:
            try:
                await asyncio.wait_for(self._gate(), max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                log.info("%s runs before the gate opened (%.0f s)", job.job_id, AFTER_WAIT_S)
            except Exception:  # the collector must start whatever happened to the gate
                log.exception("%s: waiting for the gate failed", job.job_id)
        if self._scheduler is not None:
            self._scheduler.modify_job(job.job_id, next_run_time=datetime.now(UTC))

    async def shutdown(self, timeout: float = 30.0, finish: float = FINISH_S) -> None:
        """Stop scheduling; let the runs in progress finish for up to ``finish`` seconds, then cancel what
        still runs (a collector waiting on a dead broker must not hold a stop) and wait for it to unwind
        (``timeout`` in all). APScheduler's asyncio executor cancels every run in progress when it shuts
        down, so it is paused first; a run cancelled by the stop is logged as such, not as a crash."""
        scheduler, self._scheduler = self._scheduler, None
        for task in self._releasing:
            task.cancel()
        if scheduler is not None:
            scheduler.pause()
        start = time.monotonic()
        while self._busy() and time.monotonic() - start < min(finish, timeout):
            await asyncio.sleep(0.05)
        self._stopping = True
        if scheduler is not None:
            scheduler.shutdown(wait=False)
        while self._busy() and time.monotonic() - start < timeout:
            await asyncio.sleep(0.05)

    def _busy(self) -> bool:
        return self._maintaining > 0 or any(job._lock.locked() for job in self.jobs)

    def _logged(self, name: str, task: Callable[[], Awaitable[None]]) -> Callable[[], Awaitable[object]]:
        """``task`` with its failures logged, counted as running (:meth:`shutdown` waits for it)."""

        async def run() -> None:
            self._maintaining += 1
            try:
                await task()
            except Exception:
                log.exception("maintenance task %s failed", name)
            finally:
                self._maintaining -= 1

        return self._stoppable(name, run)

    def _stoppable(self, name: str, run: Callable[[], Awaitable[object]]) -> Callable[[], Awaitable[object]]:
        """``run`` as APScheduler runs it: cancelled by :meth:`shutdown`, it ends with a log line (APScheduler
        would log the cancellation as an exception, with its traceback); any other cancellation goes on."""

        async def scheduled() -> object:
            try:
                return await run()
            except asyncio.CancelledError:
                if not self._stopping:
                    raise
                log.info("%s: the run in progress was cancelled by the stop", name)
                return None

        return scheduled

    def statuses(self) -> list[CollectorStatus]:
        return [job.status for job in self.jobs]

    async def first_round(
        self, timeout: float, names: Collection[str] | None = None, *, cluster: str | None = None
    ) -> bool:
        """Wait until every collector (of ``names`` only, of ``cluster`` only, if given) has finished its
        first run (succeeded or failed), at most ``timeout`` seconds; True if they all have."""
        deadline = time.monotonic() + timeout
        jobs = [
            job
            for job in self.jobs
            if (names is None or job.collector.name in names)
            and (cluster is None or job.collector.cluster == cluster)
        ]
        while not all(has_run(job.status) for job in jobs):
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(FIRST_ROUND_POLL_S)
        return True

    def stale(self, now: float) -> list[CollectorStatus]:
        return [s for s in self.statuses() if s.stale(now, self.stale_after_intervals)]
