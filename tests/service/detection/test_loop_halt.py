"""DetectionLoop.halt (issue 46): a replica that loses the lease stops detection without saving its state
over the new active replica's, and a promoted replica launches it again from the saved state."""

from __future__ import annotations

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
