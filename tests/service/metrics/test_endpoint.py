"""``MetricsEndpoint``'s renders: cached, shared, and rendered ahead of a steady scraper's next scrape.

The render is a counting fake in process (no worker) that moves a fake monotonic clock forward by its
duration; the timer of a render ahead is captured and fired by the test, so nothing waits on real time.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from service.metrics.sources import ClusterInputs
from tests.service.metrics import builders as b
from tests.service.metrics.endpoint_rig import KEY, Rig


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


def test_endpoint_headers_negotiating_the_same_body_share_it() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = rig.endpoint()
        assert await rig.scrape_at(endpoint, 100.0) == b"render 1 of metadata"
        # other spellings of text/plain 0.0.4 with gzip: the same body, within its TTL
        for headers in ((None, "gzip"), ("text/plain;version=0.0.4", "deflate, gzip")):
            assert await rig.scrape_at(endpoint, 101.0, headers) == b"render 1 of metadata"
        assert await rig.scrape_at(endpoint, 101.0, (None, None)) == b"render 2 of metadata"  # not gzipped

    asyncio.run(go())


def test_endpoint_two_scrapers_same_headers_each_its_own_cadence() -> None:
    """An HA pair of Prometheus replicas (same headers, 7 s apart, each every 15 s): each one's next
    scrape is rendered ahead; interleaved in one cadence, the gaps (7, 8) would match neither."""
    rig = Rig()

    async def go() -> None:
        endpoint = rig.endpoint()
        for t in (100.0, 115.0):
            await rig.scrape_at(endpoint, t, client="10.0.0.1")
            await rig.scrape_at(endpoint, t + 7.0, client="10.0.0.2")
        assert rig.renders == [1, 2]  # the second replica's scrapes shared them (TTL)
        first, second = (t for t in rig.timers if not t.cancelled)
        assert (first.delay, second.delay) == (130.0 - 3.5 - 117.0, 137.0 - 3.5 - 122.0)
        await rig.fire(endpoint, first, 126.5)
        assert await rig.scrape_at(endpoint, 130.0, client="10.0.0.1") == b"render 3 of metadata"
        await rig.fire(endpoint, second, 133.5)
        assert await rig.scrape_at(endpoint, 137.0, client="10.0.0.2") == b"render 4 of metadata"
        assert rig.renders == [1, 2, 3, 4]  # both answered at once

    asyncio.run(go())


def test_endpoint_ten_scrapers_each_keep_their_cadence() -> None:
    """Ten scraping addresses (more than the bodies kept): every one's next scrape is planned."""
    rig = Rig()

    async def go() -> None:
        endpoint = rig.endpoint()
        clients = [f"10.0.0.{n}" for n in range(10)]
        for t in (100.0, 115.0):
            for n, client in enumerate(clients):
                await rig.scrape_at(endpoint, t + n * 0.1, client=client)
        assert len([t for t in rig.timers if not t.cancelled]) == len(clients)

    asyncio.run(go())


def test_endpoint_in_process_render_trims_after_each_render() -> None:
    """The render's freed blocks go back to the system once per render (service.memory.trim), after the
    render: not per scrape answered from a body already rendered."""
    rig = Rig()
    trims: list[list[int]] = []

    async def go() -> None:
        endpoint = rig.endpoint(trim=lambda: trims.append(list(rig.renders)))
        await rig.scrape_at(endpoint, 100.0)
        await rig.scrape_at(endpoint, 100.5)  # within the TTL: the body of render 1, no trim
        await rig.scrape_at(endpoint, 115.0)
        endpoint.close()

    asyncio.run(go())
    assert rig.renders == [1, 2]
    assert trims == [[1], [1, 2]]  # each after its render had finished
