"""DetectionLoop.halt (issue 46): a replica that loses the lease stops detection without saving its state
over the new active replica's, and a promoted replica launches it again from the saved state."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.detection.loop import DetectionLoop
from service.detection.tail_sink import DetectionTailSink
from service.settings import DetectionSettings
from service.state import LatestObservations
from store.alerts import AlertStore
from store.settings import StoreSettings
from tests.service.detection.builders import C, commit_event

FAST = DetectionSettings(debounce_seconds=0.05, state_save_seconds=3600)


@pytest.fixture
def alerts(tmp_path: Path) -> Iterator[AlertStore]:
    with AlertStore.open(StoreSettings(path=tmp_path / "og.db")) as opened:
        yield opened


def _loop(alerts: AlertStore) -> DetectionLoop:
    return DetectionLoop(C, FAST, latest=LatestObservations(), alerts=alerts, tail_live=lambda: True)


async def test_detection_halt_saves_nothing_and_drops_what_is_queued(alerts: AlertStore) -> None:
    t = int(time.time() * 1000)
    loop = _loop(alerts)
    await loop.start()
    await DetectionTailSink(loop).on_events([commit_event(500, 1, t)])
    await loop.evaluate_now()
    assert loop.state.tail_positions == {7: 1}
    await DetectionTailSink(loop).on_events([commit_event(300, 2, t + 10)])  # queued, not evaluated

    await loop.halt()

    assert alerts.load_state(C) is None  # stop() would have evaluated the rewind and saved the state
    assert alerts.firing(C) == ()
    assert (loop.state.tail_positions, loop.evaluations) == ({}, 1)


async def test_detection_halted_loop_launched_again_resumes_from_the_saved_state(alerts: AlertStore) -> None:
    t = int(time.time() * 1000)
    halted = _loop(alerts)
    await halted.start()
    await DetectionTailSink(halted).on_events([commit_event(900, 1, t)])
    await halted.evaluate_now()
    await halted.halt()
    # meanwhile the other replica was active: it saw the commit at 500 and saved its state
    other = _loop(alerts)
    await other.start()
    await DetectionTailSink(other).on_events([commit_event(500, 4, t)])
    await other.stop()

    await halted.start()  # promoted again: the other replica's state, not its own from before

    assert halted.state.tail_positions == {7: 4}
    await DetectionTailSink(halted).on_events([commit_event(300, 5, t + 10)])
    await halted.evaluate_now()
    [a] = alerts.firing(C)
    assert (a.kind, a.magnitude["messages_replayed"]) == ("offset_rewind", 200)  # 500 -> 300, not 900 -> 300
    await halted.stop()


async def test_detection_hold_evaluates_nothing_until_the_tail_caught_up(alerts: AlertStore) -> None:
    t = int(time.time() * 1000)
    caught_up = False
    loop = _loop(alerts)
    loop.hold(lambda: caught_up, 30.0)
    await loop.start()
    await DetectionTailSink(loop).on_events([commit_event(500, 1, t), commit_event(300, 2, t + 10)])
    await asyncio.sleep(0.5)  # ten debounces
    assert (loop.evaluations, alerts.firing(C)) == (0, ())
    caught_up = True
    for _ in range(50):
        if alerts.firing(C):
            break
        await asyncio.sleep(0.02)
    [a] = alerts.firing(C)
    assert a.magnitude["messages_replayed"] == 200
    await loop.stop()


async def test_detection_hold_ends_at_its_deadline(alerts: AlertStore) -> None:
    loop = _loop(alerts)
    loop.hold(lambda: False, 0.3)
    await loop.start()
    await DetectionTailSink(loop).on_events([commit_event(500, 1, int(time.time() * 1000))])
    await asyncio.sleep(0.1)
    assert loop.evaluations == 0
    await asyncio.sleep(0.5)
    assert loop.evaluations >= 1
    await loop.stop()
