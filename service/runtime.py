"""The running parts of the service (store, collectors, scheduler), started and stopped as one."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from collectors.tail import OffsetsTail
from collectors.tail_progress import tune_gc
from service.scheduler import CollectorJob, Scheduler
from service.settings import Settings
from service.state import LatestObservations
from service.store import Store

log = logging.getLogger(__name__)


class Runtime:
    """Everything the HTTP layer reads from; built by :func:`build_runtime` or by tests with fakes."""

    def __init__(
        self,
        settings: Settings,
        *,
        store: Store | None,
        latest: LatestObservations,
        jobs: list[CollectorJob],
        closers: list[Callable[[], None]] | None = None,
        tails: Sequence[OffsetsTail] = (),
    ) -> None:
        self.settings = settings
        self.store = store
        self.latest = latest
        maintenance = []
        if store is not None:
            maintenance.append(("store:thin", 3600.0, self._thin_store))
        self.scheduler = Scheduler(
            jobs, stale_after_intervals=settings.stale_after_intervals, maintenance=maintenance
        )
        self._closers = closers or []
        self.tails = list(tails)  # one __consumer_offsets tail per cluster (settings.tail.enabled)

    async def start(self) -> None:
        self.scheduler.start()
        if self.tails:
            tune_gc()
        for tail in self.tails:
            tail.start()

    async def stop(self) -> None:
        # Finish the cycle in progress, stop the tails (they save positions), then release clients and
        # flush/close the store.
        await self.scheduler.shutdown()
        await asyncio.gather(*(tail.stop() for tail in self.tails))
        for close in self._closers:
            try:
                await asyncio.to_thread(close)
            except Exception:  # closing must go on for the others
                log.exception("error while closing a client")
        if self.store is not None:
            await asyncio.to_thread(self.store.close)

    async def _thin_store(self) -> None:
        if self.store is not None:
            counts = await asyncio.to_thread(self.store.thin, time.time())
            log.info("store thinned: %s", counts)

    def readiness(self, now: float) -> dict[str, Any]:
        statuses = self.scheduler.statuses()
        stale = [s for s in statuses if s.stale(now, self.scheduler.stale_after_intervals)]
        catching_up = [f"tail:{t.cluster} catching up" for t in self.tails if not t.caught_up]
        return {
            "ready": not stale and not catching_up,
            "stale": [f"{s.cluster}:{s.name}" for s in stale],
            "reasons": [f"stale:{s.cluster}:{s.name}" for s in stale] + catching_up,
            "collectors": [s.as_dict(now, self.scheduler.stale_after_intervals) for s in statuses],
            "tail": [t.figures().as_dict() for t in self.tails],
        }


def build_runtime(settings: Settings) -> Runtime:
    """The real runtime: SQLite store, kafka-python seams and every collector of every cluster."""
    from service.wiring import build_cluster_jobs, build_cluster_tail

    store = Store.open(settings.store)
    latest = LatestObservations()
    jobs: list[CollectorJob] = []
    closers: list[Callable[[], None]] = []
    tails: list[OffsetsTail] = []
    for cluster in settings.clusters:
        cluster_jobs, close = build_cluster_jobs(cluster, settings, latest, store)
        jobs.extend(cluster_jobs)
        closers.append(close)
        if settings.tail.enabled:
            tails.append(build_cluster_tail(cluster, settings, store))
    return Runtime(settings, store=store, latest=latest, jobs=jobs, closers=closers, tails=tails)
