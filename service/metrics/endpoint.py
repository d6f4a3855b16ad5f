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

By default the render runs on the metrics thread, reading the live observations: at 50k group-partitions
~0.3 CPU s a scrape, during which the API's requests share the interpreter with it (the GIL changes hands
every few milliseconds). With ``metrics.render_worker`` it runs in a separate process
(:mod:`service.metrics.worker`), so its CPU holds that process's GIL, not the API's: the metrics thread
only builds a compact snapshot (:class:`service.metrics.snapshot.Compactor`: the store and alert-store
reads, then tuples, each observation's kept until the next collector cycle replaces it) and waits on the
pipe; the price is a second interpreter holding a second copy of the picture (docs/metrics.md,
"Rendering in process or in a worker"). If the worker fails or dies, that scrape is rendered on the
metrics thread (logged once) and the next one starts a new worker; after :data:`MAX_WORKER_FAILURES`
failures in a row the endpoint renders in process for good. A custom ``render`` (tests) always runs in
process.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol

from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import CollectorRegistry

import service.metrics.standing as standing
from service import memory
from service.metrics.ahead import Ahead, Cadence
from service.metrics.collector import Source, build_registry
from service.metrics.exposition import Rendered, accepts_gzip, render
from service.metrics.options import MetricsOptions
from service.metrics.snapshot import Compactor
from service.metrics.sources import ScrapeInputs
from service.metrics.worker import RenderWorker, WorkerError

log = logging.getLogger(__name__)

Renderer = Callable[..., Rendered]  # signature of service.metrics.exposition.render
CacheKey = tuple[str, bool]  # the negotiated (content type, gzip): what a body depends on
Headers = tuple[str | None, str | None]  # (Accept, Accept-Encoding) as a client sent them
CadenceKey = tuple[str | None, CacheKey]  # (client address, body): one cadence per scraper
Coverage = frozenset[tuple[str, str]]  # (cluster, observation kind) present in a scrape's inputs
# What Prometheus 2.x and 3.x send: the body a standing render prepares before any scrape came.
PROMETHEUS_HEADERS: Headers = (
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
    "text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
    "gzip",
)

CACHE_TTL_S = 1.0  # how long a finished render answers later scrapes, at least; 0 renders every scrape
RENDER_SHARE_DIVISOR = 4  # a render of d seconds is served for (4 - 1) * d: rendering <= 1/4 of the time
_MAX_CACHED = 8  # distinct bodies (and the headers sent for them) kept; headers are client-controlled
_MAX_CADENCES = 64  # scrapers (address, body) whose cadence is kept; addresses are client-controlled
MAX_WORKER_FAILURES = 3  # worker failures in a row after which rendering stays in process


class Timer(Protocol):
    def cancel(self) -> None: ...


Schedule = Callable[[float, Callable[[], None]], Timer]  # (delay s, callback) on the event loop


def _call_later(delay: float, callback: Callable[[], None]) -> Timer:
    return asyncio.get_running_loop().call_later(delay, callback)


@dataclass(frozen=True, slots=True)
class Body:
    """A finished render: answers scrapes of its key until ``until`` (a standing one: see
    :mod:`service.metrics.standing`), never once an observation it lacked is present."""

    until: float
    rendered: Rendered
    covered: Coverage
    seen: standing.Seen
    standing: bool = False


def negotiate(accept: str | None, accept_encoding: str | None) -> CacheKey:
    """The body a client with these headers gets: its content type, and whether it is gzipped."""
    return _negotiate(accept, accept_encoding)[1]


def _negotiate(accept: str | None, accept_encoding: str | None) -> tuple[str | None, CacheKey]:
    """(``accept``, its body), or (None, the plain-text body) if prometheus_client cannot read
    ``accept``: a version it cannot compare (``version=abc``) raises inside its negotiation."""
    gzip = accepts_gzip(accept_encoding)
    try:
        return accept, (choose_encoder(accept or "")[1], gzip)
    except (TypeError, ValueError):
        return None, (choose_encoder("")[1], gzip)


@dataclass(slots=True)
class MetricsEndpoint:
    """Renders through one dedicated thread: scrapes queue behind each other instead of piling onto the
    shared worker pool, and the event loop only takes the (cheap) snapshot. With a ``worker`` the thread
    hands the render to that process and waits for it without the GIL."""

    registry: CollectorRegistry
    source: Source
    render: Renderer = render
    cache_ttl_s: float = CACHE_TTL_S
    monotonic: Callable[[], float] = time.monotonic
    clock: Callable[[], float] = time.time  # the collector's clock: "now" of a worker render
    worker: RenderWorker | None = None  # None: render on the metrics thread (settings: metrics.render_worker)
    options: MetricsOptions = field(default_factory=MetricsOptions)  # the registry's; the worker's too
    render_ahead: bool = True  # render ahead of a steady scraper's next scrape (needs cache_ttl_s > 0)
    trim: Callable[[], object] = memory.trim  # after each in-process render: its freed blocks to the system
    schedule: Schedule = _call_later
    _compactor: Compactor = field(default_factory=Compactor)
    _worker_failures: int = 0
    _worker_failure_logged: bool = False
    _executor: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=1, thread_name_prefix="metrics-render")
    )
    _cached: dict[CacheKey, Body] = field(default_factory=dict)
    _pending: dict[CacheKey, asyncio.Future[Rendered]] = field(default_factory=dict)
    _headers: dict[CacheKey, Headers] = field(default_factory=dict)  # the last sent for each body
    _durations: dict[CacheKey, float] = field(default_factory=dict)  # of the last render of each body
    _cadences: dict[CadenceKey, Cadence] = field(default_factory=dict)
    _timers: dict[CadenceKey, Timer] = field(default_factory=dict)
    _planned: dict[CadenceKey, Ahead] = field(default_factory=dict)  # until the scrape it is ahead of
    _standing: standing.Standing = field(default_factory=standing.Standing)
    _standing_key: CacheKey | None = None  # the body standing renders prepare (the last scraped)
    _standing_pending: CacheKey | None = None  # the body a standing render under way is for
    _watch: Timer | None = None
    _warmed: bool = False
    _rendered: asyncio.Event | None = None  # set when a render ends (first_picture waits on it)

    @classmethod
    def build(
        cls,
        source: Source,
        *,
        clock: Callable[[], float] = time.time,
        cache_ttl_s: float = CACHE_TTL_S,
        options: MetricsOptions | None = None,
        render_worker: bool = False,
    ) -> MetricsEndpoint:
        """The endpoint the app factory serves; ``render_worker``: render in a worker process."""
        options = options or MetricsOptions()
        registry = build_registry(source, clock=clock, options=options)
        worker = RenderWorker() if render_worker else None
        return cls(registry, source, cache_ttl_s=cache_ttl_s, clock=clock, options=options, worker=worker)

    async def scrape(
        self, accept: str | None, accept_encoding: str | None, client: str | None = None
    ) -> Rendered:
        """A fresh or just-rendered exposition: snapshot on the calling (event-loop) thread, render on
        the metrics thread. ``client``: the scraper's address (each has its own cadence)."""
        accept, key = _negotiate(accept, accept_encoding)
        self._remember(key, (accept, accept_encoding))
        if self.cache_ttl_s <= 0:
            job = partial(self._render, self.source(), accept, accept_encoding)
            return await asyncio.get_running_loop().run_in_executor(self._executor, job)
        now = self.monotonic()
        inputs = self.source()
        hit = self._valid(key, now, inputs)
        pending = self._pending.get(key)
        # a render for this key is under way (on this loop: a test client may have closed another)
        if pending is not None and pending.get_loop() is not asyncio.get_running_loop():
            pending = None
        ckey = (client, key)
        cadence = self._cadence(ckey)
        self._planned.pop(ckey, None)
        timer = self._timers.pop(ckey, None)
        if timer is not None:  # earlier than predicted: this scrape renders, the next one is planned anew
            timer.cancel()
        predicted = cadence.ahead_unanswered  # a render ahead of this scrape started (its body or a newer)
        cadence.scraped(now, answered=hit is not None or pending is not None)
        if predicted and (hit is not None or pending is not None):
            self._standing.settle()  # this scraper's cadence works: a render per scrape is enough
        elif hit is None or hit.standing:
            self._standing.extend(now)  # a standing body used, or none: keep them rendered a while
            self._standing_key = key
        if hit is not None:
            self._plan(ckey)
            return hit.rendered
        if pending is None:
            pending = self._start(key, ckey, None, inputs)
        else:
            self._plan(ckey)
        # shield: a scraper that disconnects must not cancel the render others are waiting for
        return await asyncio.shield(pending)

    def _valid(self, key: CacheKey, now: float, inputs: ScrapeInputs) -> Body | None:
        """The finished body that answers a scrape of ``key`` now, if any."""
        body = self._cached.get(key)
        if body is None or now >= body.until or not body.covered >= coverage(inputs):
            return None  # expired, or rendered before an observation present now had arrived
        newer_coming = self._standing_pending == key
        if body.standing and not (newer_coming or standing.same(body.seen, standing.observations(inputs))):
            return None  # older observations, and no body of newer ones on its way
        return body

    def _remember(self, key: CacheKey, headers: Headers) -> None:
        if key not in self._headers and len(self._headers) >= _MAX_CACHED:  # headers are client-controlled
            self._headers.clear()
        self._headers[key] = headers

    def _start(
        self,
        key: CacheKey,
        ckey: CadenceKey | None,
        ahead: Ahead | None,
        inputs: ScrapeInputs | None = None,
        *,
        standing_render: bool = False,
    ) -> asyncio.Future[Rendered]:
        """On the event loop: snapshot now (unless given), render on the metrics thread; cached when done."""
        inputs = self.source() if inputs is None else inputs
        job = partial(self._render, inputs, *self._headers.get(key, PROMETHEUS_HEADERS))
        started = self.monotonic()
        future = asyncio.get_running_loop().run_in_executor(self._executor, job)
        self._pending[key] = future
        if standing_render:
            self._standing_pending = key
        seen = coverage(inputs), standing.observations(inputs)
        future.add_done_callback(partial(self._finished, key, ckey, started, ahead, seen, standing_render))
        return future

    def _cadence(self, ckey: CadenceKey) -> Cadence:
        cadence = self._cadences.get(ckey)
        if cadence is None:
            if len(self._cadences) >= _MAX_CADENCES:
                self._cadences.clear()
                self._planned.clear()
            cadence = self._cadences[ckey] = Cadence()
        return cadence

    def _plan(self, ckey: CadenceKey) -> None:
        """After a scrape is answered (or its render finished): plan the render ahead of the next one."""
        cadence = self._cadences.get(ckey)
        if not self.render_ahead or cadence is None or ckey in self._timers:
            return
        ahead = cadence.plan(self._durations.get(ckey[1], 0.0))
        if ahead is not None:
            delay = max(0.0, ahead.start - self.monotonic())
            self._timers[ckey] = self.schedule(delay, partial(self._ahead, ckey, ahead))
            self._planned[ckey] = ahead

    def quiet_for(self) -> float:
        """Seconds from now until a render is expected: 0 while one is under way or a scrape planned
        for is due (from its render ahead's start until the scrape, at most its ``until``), else until
        the earliest render planned ahead; ``inf`` when none is. Detection saves its state in such a
        quiet (:mod:`service.detection.save_timing`): beside a render, a save slows what a scrape
        waits for."""
        if self._pending:
            return 0.0
        now = self.monotonic()
        waits = [ahead.start - now for ahead in self._planned.values() if ahead.until > now]
        return max(0.0, min(waits)) if waits else math.inf

    def _ahead(self, ckey: CadenceKey, ahead: Ahead) -> None:
        """The timer of a planned render: start it unless one for this body is under way."""
        self._timers.pop(ckey, None)
        cadence = self._cadences.get(ckey)
        if cadence is None:
            return
        cadence.started_ahead()
        if ckey[1] not in self._pending:  # one under way (a standing render) answers the scrape as well
            self._start(ckey[1], ckey, ahead)

    def watch(self) -> None:
        """On the event loop (the app's start): if :meth:`warm_up` was called, keep a standing body
        rendered (:mod:`service.metrics.standing`) from now until the scrapers' cadences are known."""
        if self._warmed and self._watch is None and self.cache_ttl_s > 0:
            self._standing.extend(self.monotonic())
            self._watch = self.schedule(standing.POLL_S, self._look)

    async def first_picture(self) -> None:
        """Wait until a finished render covers every observation present now. Returns at once when
        standing renders are off (:meth:`watch`), when nothing is observed yet, or when such a render
        exists already. The runtime starts detection after it."""
        if self._watch is None:
            return
        inputs = self.source()
        self._stand(inputs)  # the first round is in (the runtime asks then): no need to wait for a look
        wanted = coverage(inputs)
        while wanted and not any(body.covered >= wanted for body in self._cached.values()):
            if self._rendered is None:
                self._rendered = asyncio.Event()
            await self._rendered.wait()

    def _look(self) -> None:
        """Every :data:`standing.POLL_S` while watching: a standing render if new observations arrived."""
        self._watch = self.schedule(standing.POLL_S, self._look)
        self._stand()

    def _stand(self, inputs: ScrapeInputs | None = None) -> None:
        """A standing render of the latest observations (``inputs``, if just read), unless the latest
        body shows them, standing renders are over, or the collectors' first round is not in yet."""
        key = self._standing_key or negotiate(*PROMETHEUS_HEADERS)
        now = self.monotonic()
        if not self._standing.active(now) or key in self._pending:
            return
        inputs = self.source() if inputs is None else inputs
        if not coverage(inputs) or not standing.first_round_in(inputs):
            return  # nothing observed yet, or a picture about to grow
        body = self._cached.get(key)
        if (
            body is not None
            and now < body.until - self._durations.get(key, 0.0) - standing.POLL_S
            and standing.same(body.seen, standing.observations(inputs))
        ):
            return  # the latest body shows these, and answers until the next look could replace it
        self._start(key, None, None, inputs, standing_render=True)

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
        try:
            return self.render(self.registry, inputs, accept=accept, accept_encoding=accept_encoding)
        finally:
            self.trim()  # the render's working set is freed by now; its pages go back (service.memory)

    def warm_up(self) -> None:
        """Start the render worker now, on the metrics thread, so that the first scrape does not wait for a
        fresh interpreter's imports (``offsetguard serve`` calls this as it starts), and let :meth:`watch`
        keep a body rendered for the first scrapes. Returns at once; if the worker does not start, the
        first scrape tries again (or renders in process)."""
        self._warmed = True
        worker = self.worker
        if worker is not None and self.render is render:
            self._executor.submit(_start, worker)

    def _finished(
        self,
        key: CacheKey,
        ckey: CadenceKey | None,
        started: float,
        ahead: Ahead | None,
        seen: tuple[Coverage, standing.Seen],
        standing_render: bool,
        future: asyncio.Future[Rendered],
    ) -> None:
        """On the event loop, when a render ends: cache it (the TTL runs from now; a render ahead answers
        until its planned end, a standing one while it is the latest) unless it failed; a scrape's render
        plans the next one ahead."""
        if self._pending.get(key) is future:
            del self._pending[key]
        if standing_render:
            self._standing_pending = None
        if self._rendered is not None:
            self._rendered.set()
            self._rendered = None
        if future.cancelled() or future.exception() is not None:
            return
        if len(self._cached) >= _MAX_CACHED:
            self._cached.clear()
        now = self.monotonic()
        self._durations[key] = now - started
        if standing_render:
            until = now + standing.MAX_AGE_S
        else:
            ttl = max(self.cache_ttl_s, (now - started) * (RENDER_SHARE_DIVISOR - 1))
            until = max(now + ttl, ahead.until if ahead else 0.0)
        self._cached[key] = Body(until, future.result(), *seen, standing=standing_render)
        if ckey is not None and ahead is None:
            self._plan(ckey)

    def close(self) -> None:
        """Stop the render thread and the worker process (the app lifespan's end). A later scrape (the
        same app started again) gets a new thread and worker."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._planned.clear()
        self._cadences.clear()
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
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
