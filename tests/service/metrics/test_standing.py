"""Standing renders (:mod:`service.metrics.standing`): the first scrapes after a start, and those of a
scraper whose cadence is not known yet, answered at once from a body rendered when the collectors
brought new observations; no more of them once a render ahead answers its scraper."""

from __future__ import annotations

import asyncio
import threading

from service.metrics import standing
from service.metrics.endpoint import PROMETHEUS_HEADERS, MetricsEndpoint, negotiate
from service.metrics.sources import ClusterInputs, ScrapeInputs
from service.scheduler import CollectorStatus
from tests.service.metrics import builders as b
from tests.service.metrics.endpoint_rig import KEY, FakeTimer, Rig

PROM = negotiate(*PROMETHEUS_HEADERS)


def _watched(rig: Rig, at: float = 0.0) -> MetricsEndpoint:
    endpoint = rig.endpoint()
    rig.clock[0] = at
    endpoint.warm_up()  # no worker here: only arms the watch
    endpoint.watch()
    return endpoint


def _new_cycle(rig: Rig) -> None:
    """The collectors replaced the observation (a new object, the same content)."""
    rig.clusters = [ClusterInputs("c1", metadata=b.metadata())]


async def _scraped_twice(rig: Rig) -> tuple[MetricsEndpoint, FakeTimer]:
    """Watched from 90, new observations at 96 and 111, scraped at 100 and 115 (each scrape answered by
    the standing body of renders 1 and 2); the render ahead of 130 planned: the endpoint and its timer."""
    endpoint = _watched(rig, at=90.0)
    assert await rig.look(endpoint, 96.0)
    assert await rig.scrape_at(endpoint, 100.0, PROMETHEUS_HEADERS) == b"render 1 of metadata"
    _new_cycle(rig)
    assert await rig.look(endpoint, 111.0)
    assert await rig.scrape_at(endpoint, 115.0, PROMETHEUS_HEADERS) == b"render 2 of metadata"
    [ahead] = [t for t in rig.timers if t.callback != endpoint._look]
    return endpoint, ahead


def _look_starts(rig: Rig, endpoint: MetricsEndpoint, at: float) -> None:
    """The standing watch's timer goes off at ``at``; its render is left running."""
    [timer] = [t for t in rig.timers if t.callback == endpoint._look and not t.cancelled]
    timer.cancelled = True
    rig.clock[0] = at
    timer.callback()


def test_observations_same_by_identity_not_by_value() -> None:
    first = ScrapeInputs(clusters=[ClusterInputs("c1", metadata=b.metadata())])
    again = ScrapeInputs(clusters=[ClusterInputs("c1", metadata=first.clusters[0].metadata)])
    replaced = ScrapeInputs(clusters=[ClusterInputs("c1", metadata=b.metadata())])
    assert standing.same(standing.observations(first), standing.observations(again))
    assert not standing.same(standing.observations(first), standing.observations(replaced))
    assert not standing.same(None, standing.observations(first))
    assert not standing.same(standing.observations(first), ())


def test_standing_window_extended_settled_and_over() -> None:
    s = standing.Standing()
    assert not s.active(0.0)
    s.extend(10.0)
    assert s.active(10.0 + standing.WINDOW_S - 0.1) and not s.active(10.0 + standing.WINDOW_S)
    s.extend(5.0)  # an earlier reason does not shorten it
    assert s.active(10.0 + standing.WINDOW_S - 0.1)
    s.settle()
    assert not s.active(11.0)


def test_endpoint_without_warm_up_watches_nothing() -> None:
    rig = Rig()
    endpoint = rig.endpoint()
    endpoint.watch()
    assert rig.timers == []


def test_first_scrape_after_start_answered_by_the_standing_body_without_a_render() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = _watched(rig)
        assert await rig.look(endpoint, 1.0)  # the observations there: rendered for Prometheus's headers
        assert endpoint._cached[PROM].standing
        assert not await rig.look(endpoint, 4.0)  # nothing new: nothing rendered
        assert await rig.scrape_at(endpoint, 4.5, PROMETHEUS_HEADERS) == b"render 1 of metadata"
        assert rig.renders == [1]
        endpoint.close()
        assert all(t.cancelled for t in rig.timers)

    asyncio.run(go())


def test_standing_body_one_cycle_behind_only_while_the_next_renders() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = _watched(rig)
        await rig.look(endpoint, 1.0)  # render 1
        _new_cycle(rig)
        rig.gate = threading.Event()
        _look_starts(rig, endpoint, 5.0)  # render 2 (of the new cycle) under way, held by the gate
        assert PROM in endpoint._pending
        # meanwhile a scrape gets render 1 at once: one cycle behind, the newer one on its way
        assert await rig.scrape_at(endpoint, 5.5, PROMETHEUS_HEADERS) == b"render 1 of metadata"
        rig.gate.set()
        await asyncio.shield(endpoint._pending[PROM])
        assert await rig.scrape_at(endpoint, 8.0, PROMETHEUS_HEADERS) == b"render 2 of metadata"
        assert rig.renders == [1, 2]

    asyncio.run(go())


def test_standing_body_of_older_observations_with_nothing_on_its_way_not_served() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = _watched(rig)
        await rig.look(endpoint, 1.0)  # render 1
        _new_cycle(rig)  # and no look went off since: render 1 is behind, nothing newer coming
        assert await rig.scrape_at(endpoint, 3.5, PROMETHEUS_HEADERS) == b"render 2 of metadata"

    asyncio.run(go())


def test_standing_body_lacking_an_observation_present_now_not_served() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = _watched(rig)
        await rig.look(endpoint, 1.0)  # render 1: metadata only
        rig.clusters = [ClusterInputs("c1", metadata=rig.clusters[0].metadata, offsets=b.offsets())]
        assert await rig.scrape_at(endpoint, 3.5, PROMETHEUS_HEADERS) == b"render 2 of metadata,offsets"

    asyncio.run(go())


def test_no_scraper_standing_renders_stop_after_the_window() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = _watched(rig, at=0.0)
        assert await rig.look(endpoint, 1.0)
        _new_cycle(rig)
        assert await rig.look(endpoint, standing.WINDOW_S - 1.0)
        _new_cycle(rig)
        assert not await rig.look(endpoint, standing.WINDOW_S + 0.5)  # nobody scraped: over
        assert rig.renders == [1, 2]

    asyncio.run(go())


def test_nothing_observed_yet_nothing_rendered() -> None:
    rig = Rig(clusters=[ClusterInputs("c1")])

    async def go() -> None:
        endpoint = _watched(rig)
        assert not await rig.look(endpoint, 1.0)
        assert rig.renders == []

    asyncio.run(go())


def test_steady_scraper_standing_then_ahead_then_no_more_standing_renders() -> None:
    """The bench's sequence: scraped every 15 s from 100 with new observations every 5 s. The first two
    scrapes take standing bodies, the third the render ahead; from then on only renders ahead."""
    rig = Rig()

    async def go() -> None:
        endpoint, ahead = await _scraped_twice(rig)  # both scrapes answered by standing bodies
        _new_cycle(rig)
        assert await rig.look(endpoint, 121.0)  # render 3: standing renders go on until an ahead answers
        await rig.fire(endpoint, ahead, 126.5)  # render 4, ahead of 130
        assert await rig.scrape_at(endpoint, 130.0, PROMETHEUS_HEADERS) == b"render 4 of metadata"
        _new_cycle(rig)
        assert not await rig.look(endpoint, 136.0)  # settled: no standing render
        assert rig.renders == [1, 2, 3, 4]

    asyncio.run(go())


def test_standing_renders_prepare_the_body_of_the_last_scraper_they_serve() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = _watched(rig)
        await rig.look(endpoint, 1.0)  # render 1, for Prometheus's headers
        assert await rig.scrape_at(endpoint, 4.0) == b"render 2 of metadata"  # text/plain: not that body
        assert endpoint._standing_key == negotiate(*KEY)
        _new_cycle(rig)
        assert await rig.look(endpoint, 6.0)  # render 3, of text/plain
        assert await rig.scrape_at(endpoint, 9.0) == b"render 3 of metadata"
        assert rig.renders == [1, 2, 3]

    asyncio.run(go())


def test_scrape_rendered_on_demand_restarts_standing_renders() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = rig.endpoint()
        rig.clock[0] = 0.0
        endpoint.warm_up()
        endpoint.watch()
        _new_cycle(rig)
        assert not await rig.look(endpoint, standing.WINDOW_S + 1.0)  # the start's window is over
        assert await rig.scrape_at(endpoint, 200.0) == b"render 1 of metadata"  # on demand
        _new_cycle(rig)
        assert await rig.look(endpoint, 205.0)  # a scrape it could not answer: standing renders again
        assert rig.renders == [1, 2]

    asyncio.run(go())


def test_standing_body_older_than_max_age_not_served_and_rendered_again_before() -> None:
    """Nothing new from the collectors (an outage: staleness and alert counts move on): the standing body
    answers for MAX_AGE_S at most, and a look renders it again before it runs out."""
    rig = Rig(render_s=1.0)

    async def go() -> None:
        endpoint = _watched(rig)
        assert await rig.look(endpoint, 1.0)  # render 1, ends at 2: answers until 12
        assert not await rig.look(endpoint, 9.5)  # 12 - 1 s render - 1 s look: not yet
        assert await rig.scrape_at(endpoint, 9.6, PROMETHEUS_HEADERS) == b"render 1 of metadata"
        assert await rig.look(endpoint, 10.5)  # the same observations, rendered again (2)
        endpoint._cached.clear()
        assert await rig.look(endpoint, 12.0)  # (3), ends at 13
        assert await rig.scrape_at(endpoint, 13.0 + standing.MAX_AGE_S - 0.1, PROMETHEUS_HEADERS) == (
            b"render 3 of metadata"
        )
        rig.clock[0] = 13.0 + standing.MAX_AGE_S  # and no look since
        assert await rig.scrape_at(endpoint, rig.clock[0], PROMETHEUS_HEADERS) == b"render 4 of metadata"

    asyncio.run(go())


def test_scrape_predicted_settles_even_when_a_newer_standing_body_answers_it() -> None:
    """New observations between the render ahead and its scrape: a standing render replaces the body
    ahead, and the scrape takes that one. It was predicted all the same: no standing renders after it
    (else they would go on for good, one every collector cycle)."""
    rig = Rig()

    async def go() -> None:
        endpoint, ahead = await _scraped_twice(rig)
        await rig.fire(endpoint, ahead, 126.5)  # render 3, ahead of 130, ends at 128.5
        _new_cycle(rig)
        assert await rig.look(endpoint, 128.6)  # render 4 (standing), ends at 130.6
        assert await rig.scrape_at(endpoint, 131.0, PROMETHEUS_HEADERS) == b"render 4 of metadata"
        _new_cycle(rig)
        assert not await rig.look(endpoint, 136.0)  # settled
        assert rig.renders == [1, 2, 3, 4]

    asyncio.run(go())


def test_timer_ahead_while_a_standing_render_runs_counts_as_the_render_ahead() -> None:
    gate = threading.Event()
    rig = Rig(gate=gate)

    async def go() -> None:
        gate.set()
        endpoint, ahead = await _scraped_twice(rig)
        _new_cycle(rig)
        gate.clear()
        _look_starts(rig, endpoint, 126.0)  # render 3 (standing) under way
        ahead.callback()  # its moment: nothing more started, the standing one answers
        assert len(endpoint._pending) == 1
        gate.set()
        await asyncio.shield(next(iter(endpoint._pending.values())))
        assert await rig.scrape_at(endpoint, 130.0, PROMETHEUS_HEADERS) == b"render 3 of metadata"
        _new_cycle(rig)
        assert not await rig.look(endpoint, 136.0)  # settled
        assert rig.renders == [1, 2, 3]

    asyncio.run(go())


def test_first_picture_at_once_without_the_watch_or_observations() -> None:
    async def go() -> None:
        await asyncio.wait_for(Rig().endpoint().first_picture(), 1.0)  # not watched
        nothing = Rig(clusters=[ClusterInputs("c1")])
        await asyncio.wait_for(_watched(nothing).first_picture(), 1.0)  # watched, nothing observed
        assert nothing.renders == []

    asyncio.run(go())


def test_first_picture_waits_for_a_render_of_every_observation_present_when_asked() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = _watched(rig)
        rig.gate = threading.Event()
        _look_starts(rig, endpoint, 1.0)  # render 1, of the metadata alone, under way
        rig.clusters = [ClusterInputs("c1", metadata=b.metadata(), offsets=b.offsets())]
        waiter = asyncio.create_task(endpoint.first_picture())
        rig.gate.set()
        await asyncio.shield(endpoint._pending[PROM])
        await asyncio.sleep(0.05)
        assert not waiter.done()  # render 1 lacks the offsets
        await rig.look(endpoint, 2.0)  # render 2: metadata and offsets
        await asyncio.wait_for(waiter, 1.0)
        assert rig.renders == [1, 2]
        await asyncio.wait_for(endpoint.first_picture(), 1.0)  # and at once from then on

    asyncio.run(go())


def test_standing_render_waits_until_every_collector_has_run_once() -> None:
    running = CollectorStatus("offsets", "c1", 5.0, runs=1)
    rig = Rig(statuses=[CollectorStatus("metadata", "c1", 5.0, runs=1, last_success_at=1.0), running])

    async def go() -> None:
        endpoint = _watched(rig)
        assert not await rig.look(endpoint, 1.0)  # the offsets' first run is under way: the picture grows
        running.failures = 1  # its first run failed: the round is in all the same
        assert await rig.look(endpoint, 2.0)
        assert await rig.scrape_at(endpoint, 5.0, PROMETHEUS_HEADERS) == b"render 1 of metadata"

    asyncio.run(go())


def test_first_picture_starts_a_standing_render_without_waiting_for_a_look() -> None:
    rig = Rig()

    async def go() -> None:
        endpoint = _watched(rig)
        await asyncio.wait_for(endpoint.first_picture(), 1.0)
        assert rig.renders == [1]
        assert all(t.callback == endpoint._look and not t.cancelled for t in rig.timers)  # none went off

    asyncio.run(go())
