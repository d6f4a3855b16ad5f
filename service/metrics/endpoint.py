"""What ``/metrics`` needs, built once by the app factory: registry, snapshot source, render thread.

A render of 100,000+ series holds the GIL for seconds, which every other request on the process
competes with. So a finished render answers later scrapes (same ``Accept`` / ``Accept-Encoding``) for
:data:`CACHE_TTL_S`, or for ``RENDER_SHARE_DIVISOR - 1`` times as long as it took if that is longer,
and scrapes arriving while a render is under way share it: back-to-back scrapers (several Prometheus
replicas, a debugging loop) keep the render thread busy at most ``1 / RENDER_SHARE_DIVISOR`` of the
time. Prometheus scrapes every 15 s or more, so it only ever gets fresh renders; a back-to-back scraper
gets figures at most one TTL plus one render older than the snapshot. A scraper with a steady interval
(Prometheus) has its next body rendered shortly before its next scrape (:mod:`service.metrics.ahead`):
the render still happens once per scrape, but the scrape no longer waits for it. A finished render of a
picture that lacked an observation now present (the first collections after a start) answers no later
scrape: a scraper polling a starting service gets the complete picture with the first render after it.

The render itself runs in a separate process (:mod:`service.metrics.worker`), so its seconds of CPU hold
that process's GIL, not the API's: the metrics thread only builds a compact snapshot
(:class:`service.metrics.snapshot.Compactor`: the store and alert-store reads, then tuples, each
observation's kept until the next collector cycle replaces it) and waits on the pipe. If the worker
fails or dies, that scrape is rendered on the metrics thread as before (logged once)
and the next one starts a new worker; after :data:`MAX_WORKER_FAILURES` failures in a row the endpoint
renders in process for good. A custom ``render`` (tests) always runs in process.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol

from prometheus_client.registry import CollectorRegistry

from service.metrics.ahead import Ahead, Cadence
from service.metrics.collector import Source, build_registry
from service.metrics.exposition import Rendered, render
from service.metrics.options import MetricsOptions
from service.metrics.snapshot import Compactor
from service.metrics.sources import ScrapeInputs
from service.metrics.worker import RenderWorker, WorkerError

log = logging.getLogger(__name__)

Renderer = Callable[..., Rendered]  # signature of service.metrics.exposition.render
CacheKey = tuple[str | None, str | None]  # (Accept, Accept-Encoding)
Coverage = frozenset[tuple[str, str]]  # (cluster, observation kind) present in a scrape's inputs

CACHE_TTL_S = 1.0  # how long a finished render answers later scrapes, at least; 0 renders every scrape
RENDER_SHARE_DIVISOR = 4  # a render of d seconds is served for (4 - 1) * d: rendering <= 1/4 of the time
_MAX_CACHED = 8  # distinct (Accept, Accept-Encoding) pairs kept; headers are client-controlled
MAX_WORKER_FAILURES = 3  # worker failures in a row after which rendering stays in process


class Timer(Protocol):
    def cancel(self) -> None: ...


Schedule = Callable[[float, Callable[[], None]], Timer]  # (delay s, callback) on the event loop


def _call_later(delay: float, callback: Callable[[], None]) -> Timer:
    return asyncio.get_running_loop().call_later(delay, callback)


@dataclass(slots=True)
class MetricsEndpoint:
    """Renders through one dedicated thread: scrapes queue behind each other instead of piling onto the
    shared worker pool, and the event loop only takes the (cheap) snapshot. The thread hands the render
    to the worker process and waits for it without the GIL."""

    registry: CollectorRegistry
    source: Source
    render: Renderer = render
    cache_ttl_s: float = CACHE_TTL_S
    monotonic: Callable[[], float] = time.monotonic
    clock: Callable[[], float] = time.time  # the collector's clock: "now" of a worker render
    worker: RenderWorker | None = field(default_factory=RenderWorker)  # None: always render in process
    options: MetricsOptions = field(default_factory=MetricsOptions)  # the registry's; the worker's too
    render_ahead: bool = True  # render ahead of a steady scraper's next scrape (needs cache_ttl_s > 0)
    schedule: Schedule = _call_later
    _compactor: Compactor = field(default_factory=Compactor)
    _worker_failures: int = 0
    _worker_failure_logged: bool = False
    _executor: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=1, thread_name_prefix="metrics-render")
    )
    _cached: dict[CacheKey, tuple[float, Rendered, Coverage]] = field(default_factory=dict)
    _pending: dict[CacheKey, asyncio.Future[Rendered]] = field(default_factory=dict)
    _cadences: dict[CacheKey, Cadence] = field(default_factory=dict)
    _timers: dict[CacheKey, Timer] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        source: Source,
        *,
        clock: Callable[[], float] = time.time,
        cache_ttl_s: float = CACHE_TTL_S,
        options: MetricsOptions | None = None,
    ) -> MetricsEndpoint:
        options = options or MetricsOptions()
        registry = build_registry(source, clock=clock, options=options)
        return cls(registry, source, cache_ttl_s=cache_ttl_s, clock=clock, options=options)

    async def scrape(self, accept: str | None, accept_encoding: str | None) -> Rendered:
        """A fresh or just-rendered exposition: snapshot on the calling (event-loop) thread, render on
        the metrics thread."""
        key = (accept, accept_encoding)
        if self.cache_ttl_s <= 0:
            job = partial(self._render, self.source(), accept, accept_encoding)
            return await asyncio.get_running_loop().run_in_executor(self._executor, job)
        now = self.monotonic()
        inputs = self.source()
        hit = self._cached.get(key)
        if hit is not None and (now >= hit[0] or not hit[2] >= coverage(inputs)):
            hit = None  # expired, or rendered before an observation present now had arrived
        pending = self._pending.get(key)
        # a render for this key is under way (on this loop: a test client may have closed another)
        if pending is not None and pending.get_loop() is not asyncio.get_running_loop():
            pending = None
        cadence = self._cadence(key)
        timer = self._timers.pop(key, None)
        if timer is not None:  # earlier than predicted: this scrape renders, the next one is planned anew
            timer.cancel()
        cadence.scraped(now, answered=hit is not None or pending is not None)
        if hit is not None:
            self._plan(key)
            return hit[1]
        if pending is None:
            pending = self._start(key, None, inputs)
        else:
            self._plan(key)
        # shield: a scraper that disconnects must not cancel the render others are waiting for
        return await asyncio.shield(pending)

    def _start(
        self, key: CacheKey, ahead: Ahead | None, inputs: ScrapeInputs | None = None
    ) -> asyncio.Future[Rendered]:
        """On the event loop: snapshot now (unless given), render on the metrics thread; cached when done."""
        inputs = self.source() if inputs is None else inputs
        job = partial(self._render, inputs, *key)
        started = self.monotonic()
        future = asyncio.get_running_loop().run_in_executor(self._executor, job)
        self._pending[key] = future
        future.add_done_callback(partial(self._finished, key, started, ahead, coverage(inputs)))
        return future

    def _cadence(self, key: CacheKey) -> Cadence:
        cadence = self._cadences.get(key)
        if cadence is None:
            if len(self._cadences) >= _MAX_CACHED:  # headers are client-controlled
                self._cadences.clear()
            cadence = self._cadences[key] = Cadence()
        return cadence

    def _plan(self, key: CacheKey) -> None:
        """After a scrape is answered (or its render finished): plan the render ahead of the next one."""
        cadence = self._cadences.get(key)
        if not self.render_ahead or cadence is None or key in self._timers:
            return
        ahead = cadence.plan()
        if ahead is not None:
            delay = max(0.0, ahead.start - self.monotonic())
            self._timers[key] = self.schedule(delay, partial(self._ahead, key, ahead))

    def _ahead(self, key: CacheKey, ahead: Ahead) -> None:
        """The timer of a planned render: start it unless one for this key is under way."""
        self._timers.pop(key, None)
        cadence = self._cadences.get(key)
        if key in self._pending or cadence is None:
            return
        cadence.started_ahead()
        self._start(key, ahead)

    def _render(self, inputs: ScrapeInputs, accept: str | None, accept_encoding: str | None) -> Rendered:
        """On the metrics thread: in the worker process if there is one, else (or if it fails) here."""
        worker = self.worker
        if worker is not None and self.render is render and self._worker_failures < MAX_WORKER_FAILURES:
            try:
                snapshot = self._compactor.compact(inputs, self.clock())
                rendered = worker.render(snapshot, accept, accept_encoding, self.options)
            except Exception as exc:  # any failure: this scrape renders in process
                self._worker_failures += 1
                if not self._worker_failure_logged:
                    self._worker_failure_logged = True
                    log.warning("metrics: render worker failed, rendering in process: %s", exc)
                if self._worker_failures >= MAX_WORKER_FAILURES:
                    log.warning(
                        "metrics: render worker failed %d times in a row: in process for good",
                        MAX_WORKER_FAILURES,
                    )
            else:
                self._worker_failures = 0
                return rendered
        return self.render(self.registry, inputs, accept=accept, accept_encoding=accept_encoding)

    def warm_up(self) -> None:
        """Start the render worker now, on the metrics thread, so that the first scrape does not wait for a
        fresh interpreter's imports (``offsetguard serve`` calls this as it starts). Returns at once; if
        the worker does not start, the first scrape tries again (or renders in process)."""
        worker = self.worker
        if worker is not None and self.render is render:
            self._executor.submit(_start, worker)

    def _finished(
        self,
        key: CacheKey,
        started: float,
        ahead: Ahead | None,
        covered: Coverage,
        future: asyncio.Future[Rendered],
    ) -> None:
        """On the event loop, when a render ends: cache it (the TTL runs from now; a render ahead answers
        until its planned end) unless it failed; a scrape's render plans the next one ahead."""
        self._pending.pop(key, None)
        if future.cancelled() or future.exception() is not None:
            return
        if len(self._cached) >= _MAX_CACHED:
            self._cached.clear()
        now = self.monotonic()
        ttl = max(self.cache_ttl_s, (now - started) * (RENDER_SHARE_DIVISOR - 1))
        self._cached[key] = (max(now + ttl, ahead.until if ahead else 0.0), future.result(), covered)
        cadence = self._cadences.get(key)
        if cadence is not None:
            cadence.duration = now - started
            if ahead is None:
                self._plan(key)

    def close(self) -> None:
        """Stop the render thread and the worker process (the app lifespan's end). A later scrape (the
        same app started again) gets a new thread and worker."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._cadences.clear()
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="metrics-render")
        worker = self.worker
        if worker is not None:
            self.worker = RenderWorker(delay_s=worker.delay_s, render_timeout_s=worker.render_timeout_s)
            worker.close()


def coverage(inputs: ScrapeInputs) -> Coverage:
    """Which observations of which cluster ``inputs`` hold."""
    return frozenset(
        (c.cluster, kind)
        for c in inputs.clusters
        for kind, observed in (
            ("metadata", c.metadata),
            ("offsets", c.offsets),
            ("groups", c.groups),
            ("committed", c.committed),
        )
        if observed is not None
    )


def _start(worker: RenderWorker) -> None:
    try:
        worker.start()
    except WorkerError as exc:
        log.info("metrics: render worker not started ahead of the first scrape: %s", exc)
