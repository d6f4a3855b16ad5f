"""A fake-timed rig around :class:`MetricsEndpoint`: a counting render in process (no worker) that moves
a fake monotonic clock forward by its duration; timers are captured and fired by the test, so nothing
waits on real time."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from prometheus_client.registry import CollectorRegistry

from service.metrics.endpoint import MetricsEndpoint, coverage, negotiate
from service.metrics.exposition import Rendered
from service.metrics.sources import ClusterInputs, ScrapeInputs
from service.scheduler import CollectorStatus
from tests.service.metrics import builders as b

RENDER_S = 2.0  # the fake render's duration: lead = 1.5 x 2 + 0.5 = 3.5 s
KEY = ("text/plain", "gzip")  # as sent
BODY = negotiate(*KEY)  # the body it gets


@dataclass
class FakeTimer:
    delay: float
    callback: Callable[[], None]
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


@dataclass
class Rig:
    clock: list[float] = field(default_factory=lambda: [0.0])
    clusters: list[ClusterInputs] = field(
        default_factory=lambda: [ClusterInputs("c1", metadata=b.metadata())]
    )
    renders: list[int] = field(default_factory=list)  # 1, 2, ... one per render
    timers: list[FakeTimer] = field(default_factory=list)
    gate: threading.Event | None = None  # set: renders wait for it
    render_s: float = RENDER_S
    statuses: list[CollectorStatus] = field(default_factory=list)  # none: every collector has run

    def source(self) -> ScrapeInputs:
        return ScrapeInputs(clusters=list(self.clusters), statuses=list(self.statuses))

    def render(self, registry: Any, inputs: ScrapeInputs, **_: Any) -> Rendered:
        if self.gate is not None:
            assert self.gate.wait(10)
        self.renders.append(len(self.renders) + 1)
        self.clock[0] += self.render_s
        kinds = sorted(kind for _, kind in coverage(inputs))
        return Rendered(f"render {len(self.renders)} of {','.join(kinds)}".encode(), "text/plain", None)

    def schedule(self, delay: float, callback: Callable[[], None]) -> FakeTimer:
        timer = FakeTimer(delay, callback)
        self.timers.append(timer)
        return timer

    def endpoint(self, **overrides: Any) -> MetricsEndpoint:
        return MetricsEndpoint(
            CollectorRegistry(),
            self.source,
            render=self.render,
            worker=None,
            monotonic=lambda: self.clock[0],
            schedule=self.schedule,
            **overrides,
        )

    async def learned(self) -> MetricsEndpoint:
        """An endpoint scraped at 100 and 115 (renders 1 and 2 finished; the render ahead of 130 planned)."""
        if self.gate is not None:
            self.gate.set()
        endpoint = self.endpoint()
        await self.scrape_at(endpoint, 100.0)
        await self.scrape_at(endpoint, 115.0)
        return endpoint

    async def scrape_at(
        self,
        endpoint: MetricsEndpoint,
        t: float,
        headers: tuple[str | None, str | None] = KEY,
        client: str | None = None,
    ) -> bytes:
        self.clock[0] = t
        return (await endpoint.scrape(*headers, client)).body

    async def look(self, endpoint: MetricsEndpoint, at: float) -> bool:
        """The standing watch's timer goes off at ``at``; whether it started a render (awaited)."""
        [timer] = [t for t in self.timers if t.callback == endpoint._look and not t.cancelled]
        timer.cancelled = True  # went off
        self.clock[0] = at
        before = dict(endpoint._pending)
        timer.callback()
        started = [f for k, f in endpoint._pending.items() if before.get(k) is not f]
        for future in started:
            await asyncio.shield(future)
        return bool(started)

    async def fire(self, endpoint: MetricsEndpoint, timer: FakeTimer, at: float) -> None:
        """The timer goes off at ``at``; returns when the render it started has finished."""
        self.clock[0] = at
        before = dict(endpoint._pending)
        timer.callback()
        if self.gate is None or self.gate.is_set():
            started = [f for k, f in endpoint._pending.items() if before.get(k) is not f]
            for pending in started:
                await asyncio.shield(pending)
