"""``MetricsEndpoint``'s renders: cached, shared, and rendered ahead of a steady scraper's next scrape.

The render is a counting fake in process (no worker) that moves a fake monotonic clock forward by its
duration; the timer of a render ahead is captured and fired by the test, so nothing waits on real time.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from prometheus_client.registry import CollectorRegistry

from service.metrics.endpoint import MetricsEndpoint, coverage
from service.metrics.exposition import Rendered
from service.metrics.sources import ClusterInputs, ScrapeInputs
from tests.service.metrics import builders as b

RENDER_S = 2.0  # the fake render's duration: lead = 1.5 x 2 + 0.5 = 3.5 s
KEY = ("text/plain", "gzip")


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

    def source(self) -> ScrapeInputs:
        return ScrapeInputs(clusters=list(self.clusters))

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

    async def scrape_at(self, endpoint: MetricsEndpoint, t: float) -> bytes:
        self.clock[0] = t
        return (await endpoint.scrape(*KEY)).body

    async def fire(self, endpoint: MetricsEndpoint, timer: FakeTimer, at: float) -> None:
        """The timer goes off at ``at``; returns when the render it started has finished."""
        self.clock[0] = at
        timer.callback()
        pending = endpoint._pending.get(KEY)
        if pending is not None and (self.gate is None or self.gate.is_set()):
            await asyncio.shield(pending)


def test_endpoint_steady_scraper_next_body_rendered_ahead_scrape_answered_without_render() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = rig.endpoint()
        assert await rig.scrape_at(endpoint, 100.0) == b"render 1 of metadata"
        assert rig.timers == []  # one scrape: no cadence yet
        assert await rig.scrape_at(endpoint, 115.0) == b"render 2 of metadata"
        (timer,) = rig.timers
        assert timer.delay == 130.0 - 3.5 - 117.0  # planned from the end of the render at 117
        await rig.fire(endpoint, timer, 126.5)
        assert rig.renders == [1, 2, 3]
        assert await rig.scrape_at(endpoint, 130.0) == b"render 3 of metadata"  # at once: no render
        assert rig.renders == [1, 2, 3]
        assert rig.timers[-1].delay == 145.0 - 3.5 - 130.0  # the next one planned from this scrape
        endpoint.close()
        assert rig.timers[-1].cancelled

    asyncio.run(go())


def test_endpoint_late_scrape_within_lead_still_answered_ahead_later_renders_anew() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = await rig.learned()
        await rig.fire(endpoint, rig.timers[-1], 126.5)
        assert await rig.scrape_at(endpoint, 133.4) == b"render 3 of metadata"  # due 130 + lead 3.5
        rig.timers[-1].cancel()
        assert await rig.scrape_at(endpoint, 200.0) == b"render 4 of metadata"  # long expired: rendered now

    asyncio.run(go())


def test_endpoint_quick_render_ahead_answers_until_lead_after_due_beyond_its_ttl() -> None:
    rig = Rig(render_s=0.2)  # lead 0.8 s: the body answers until 130.8; its TTL alone ends at 130.4

    async def go() -> None:
        endpoint = await rig.learned()
        await rig.fire(endpoint, rig.timers[-1], 129.2)
        assert await rig.scrape_at(endpoint, 130.7) == b"render 3 of metadata"
        assert rig.renders == [1, 2, 3]

    asyncio.run(go())


def test_endpoint_render_ahead_unused_next_scrape_plans_none() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = await rig.learned()
        await rig.fire(endpoint, rig.timers[-1], 126.5)
        planned = len(rig.timers)
        assert await rig.scrape_at(endpoint, 160.0) == b"render 4 of metadata"  # the scraper was away
        assert len(rig.timers) == planned  # so nothing planned after this scrape
        assert await rig.scrape_at(endpoint, 175.0) == b"render 5 of metadata"
        assert len(rig.timers) == planned + 1  # steady again: planned again

    asyncio.run(go())


def test_endpoint_scrape_earlier_than_planned_cancels_the_timer() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = await rig.learned()
        first = rig.timers[-1]
        assert await rig.scrape_at(endpoint, 125.0) == b"render 3 of metadata"
        assert first.cancelled
        assert rig.renders == [1, 2, 3]  # rendered for that scrape, not ahead as well

    asyncio.run(go())


def test_endpoint_scrape_during_render_ahead_shares_it() -> None:
    gate = threading.Event()
    rig = Rig(gate=gate)

    async def go() -> None:
        endpoint = await rig.learned()
        gate.clear()
        await rig.fire(endpoint, rig.timers[-1], 129.9)  # started late: still rendering at 130
        scrape = asyncio.ensure_future(rig.scrape_at(endpoint, 130.0))
        await asyncio.sleep(0)
        gate.set()
        assert await scrape == b"render 3 of metadata"
        assert rig.renders == [1, 2, 3]
        assert len(rig.timers) == 2  # planned from the shared scrape, not skipped as unused

    asyncio.run(go())


def test_endpoint_fast_scraper_shares_renders_through_the_ttl_nothing_planned() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = rig.endpoint()
        times = (100.0, 103.0, 106.0, 109.0, 112.0)  # 3 s apart: under the 5 s minimum
        bodies = [await rig.scrape_at(endpoint, t) for t in times]
        assert rig.timers == []
        # a 2 s render answers for 3 x 2 s after it ends (RENDER_SHARE_DIVISOR): 102-108, 111-117
        assert bodies == [b"render 1 of metadata"] * 3 + [b"render 2 of metadata"] * 2

    asyncio.run(go())


def test_endpoint_render_ahead_off_or_no_cache_nothing_planned() -> None:
    for overrides in ({"render_ahead": False}, {"cache_ttl_s": 0.0}):
        rig = Rig()

        async def go(rig: Rig = rig, overrides: dict[str, Any] = overrides) -> None:
            endpoint = rig.endpoint(**overrides)
            for t in (100.0, 115.0, 130.0):
                await rig.scrape_at(endpoint, t)
            assert rig.timers == []
            assert rig.renders == [1, 2, 3]

        asyncio.run(go())


def test_endpoint_timer_while_a_scrape_renders_starts_nothing() -> None:
    gate = threading.Event()
    rig = Rig(gate=gate)

    async def go() -> None:
        endpoint = await rig.learned()
        timer = rig.timers[-1]
        gate.clear()
        rig.clock[0] = 200.0
        endpoint._cached.clear()
        scrape = asyncio.ensure_future(endpoint.scrape(*KEY))  # cancels the timer: fire it anyway
        await asyncio.sleep(0)
        timer.callback()
        gate.set()
        await scrape
        assert rig.renders == [1, 2, 3]

    asyncio.run(go())


def test_endpoint_render_of_fewer_observations_not_served_once_more_arrived() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = rig.endpoint()
        assert await rig.scrape_at(endpoint, 100.0) == b"render 1 of metadata"
        assert await rig.scrape_at(endpoint, 103.0) == b"render 1 of metadata"  # within its 6 s
        rig.clusters = [ClusterInputs("c1", metadata=b.metadata(), offsets=b.offsets())]
        assert await rig.scrape_at(endpoint, 104.0) == b"render 2 of metadata,offsets"
        rig.clusters = [ClusterInputs("c1", offsets=b.offsets())]  # fewer again: the newer body serves
        assert await rig.scrape_at(endpoint, 107.0) == b"render 2 of metadata,offsets"
        rig.clusters = [ClusterInputs("c1", offsets=b.offsets()), ClusterInputs("c2", groups=b.groups())]
        assert await rig.scrape_at(endpoint, 108.0) == b"render 3 of groups,offsets"

    asyncio.run(go())
