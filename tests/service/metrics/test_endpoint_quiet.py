"""``MetricsEndpoint.quiet_for``: how long until the endpoint expects to render (detection's state saves
wait for such a quiet). Fake-timed (:mod:`tests.service.metrics.endpoint_rig`): scrapes at 100 and 115
plan the render ahead of 130 at 126.5 (lead 3.5 s), its body answering until 133.5."""

from __future__ import annotations

import asyncio
import math
import threading

from tests.service.metrics.endpoint_rig import Rig


def test_quiet_for_no_scraper_known_unbounded() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = rig.endpoint()
        assert endpoint.quiet_for() == math.inf
        await rig.scrape_at(endpoint, 100.0)  # one scrape: no cadence, nothing planned
        assert endpoint.quiet_for() == math.inf

    asyncio.run(go())


def test_quiet_for_until_the_render_ahead_then_none_until_the_scrape_then_until_the_next() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = await rig.learned()
        assert rig.clock[0] == 117.0  # the second render's end
        assert endpoint.quiet_for() == 126.5 - 117.0
        rig.clock[0] = 126.0
        assert endpoint.quiet_for() == 0.5
        await rig.fire(endpoint, rig.timers[-1], 126.5)  # rendered ahead, 126.5-128.5
        assert rig.clock[0] == 128.5
        assert endpoint.quiet_for() == 0.0  # the scrape it is for is due: not quiet until it came
        await rig.scrape_at(endpoint, 130.0)
        assert endpoint.quiet_for() == 141.5 - 130.0  # the next one's render ahead

    asyncio.run(go())


def test_quiet_for_none_while_a_render_is_under_way() -> None:
    gate = threading.Event()
    rig = Rig(gate=gate)

    async def go() -> None:
        endpoint = rig.endpoint()
        scrape = asyncio.ensure_future(rig.scrape_at(endpoint, 100.0))
        await asyncio.sleep(0)
        assert endpoint.quiet_for() == 0.0
        gate.set()
        await scrape
        assert endpoint.quiet_for() == math.inf

    asyncio.run(go())


def test_quiet_for_scraper_gone_quiet_again_once_its_planned_body_expired() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = await rig.learned()
        await rig.fire(endpoint, rig.timers[-1], 126.5)
        rig.clock[0] = 133.4  # no scrape came; the body rendered ahead still answers one
        assert endpoint.quiet_for() == 0.0
        rig.clock[0] = 133.5
        assert endpoint.quiet_for() == math.inf
        endpoint.close()

    asyncio.run(go())


def test_quiet_for_close_forgets_the_plans() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = await rig.learned()
        endpoint.close()
        assert endpoint.quiet_for() == math.inf

    asyncio.run(go())
