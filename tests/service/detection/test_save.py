"""DetectionLoop's state save: skipped while the state is the one saved (or loaded), done once it moved."""

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


@pytest.fixture
def alerts(tmp_path: Path) -> Iterator[AlertStore]:
    with AlertStore.open(StoreSettings(path=tmp_path / "og.db")) as opened:
        yield opened


def _loop(alerts: AlertStore, clock: list[float]) -> DetectionLoop:
    settings = DetectionSettings(debounce_seconds=0.1, state_save_seconds=3600)
    return DetectionLoop(
        C,
        settings,
        latest=LatestObservations(),
        alerts=alerts,
        tail_live=lambda: True,
        clock=lambda: clock[0],
    )


async def test_save_state_unchanged_since_saved_skipped_changed_saved(alerts: AlertStore) -> None:
    clock = [time.time()]
    loop = _loop(alerts, clock)
    await loop.start()
    await DetectionTailSink(loop).on_events([commit_event(500, 1, int(clock[0] * 1000))])
    await loop.evaluate_now()
    await loop._save_state()
    first = alerts.load_state(C)
    assert first is not None and first.saved_at == clock[0]

    clock[0] += 60
    await loop._save_state()  # nothing evaluated since: not written again
    assert alerts.load_state(C) == first

    await DetectionTailSink(loop).on_events([commit_event(600, 2, int(clock[0] * 1000))])
    await loop.evaluate_now()
    clock[0] += 60
    await loop.stop()  # the state moved: saved
    again = alerts.load_state(C)
    assert again is not None and again.saved_at == clock[0]
    assert (again.body, again.parts) != (first.body, first.parts)


async def test_save_state_loaded_and_unchanged_not_written_again(alerts: AlertStore) -> None:
    clock = [time.time()]
    first = _loop(alerts, clock)
    await first.start()
    await DetectionTailSink(first).on_events([commit_event(500, 1, int(clock[0] * 1000))])
    await first.evaluate_now()
    await first.stop()
    saved = alerts.load_state(C)

    clock[0] += 60
    second = _loop(alerts, clock)
    await second.start()
    await second.stop()  # loaded, nothing evaluated: the store holds it already
    assert alerts.load_state(C) == saved
