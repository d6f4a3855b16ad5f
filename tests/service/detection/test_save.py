"""DetectionLoop's state save: skipped while the state is the one saved (or loaded), done once it moved."""

from __future__ import annotations

import asyncio
import math
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from alerts.state import DetectionState
from service.detection import save_timing, state_codec
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


def _part_rows(path: Path) -> dict[int, int]:
    """seq -> rowid of the cluster's stored parts (a part written again gets a new rowid)."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT seq, rowid FROM detection_state_parts WHERE cluster = ?", (C,))
        return dict(rows.fetchall())


def _as_from_scratch(alerts: AlertStore, state: DetectionState) -> None:
    saved = alerts.load_state(C)
    assert saved is not None
    body, parts = state_codec.encode(state)
    assert (saved.body, saved.parts) == (body, tuple(parts))
    assert state_codec.load(saved.body, saved.format, saved.parts) == replace(
        state, swept=None
    )  # (never saved)


async def test_save_state_by_change_rewrites_only_changed_parts_and_stores_a_save_from_scratch(
    alerts: AlertStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state_codec, "CHUNK_ROWS", 1)  # a part per row
    clock = [time.time()]
    loop = _loop(alerts, clock)
    await loop.start()
    at = int(clock[0] * 1000)
    sink = DetectionTailSink(loop)
    await sink.on_events([commit_event(500, 1, at, "g", 0), commit_event(700, 2, at, "h", 1)])
    await loop.evaluate_now()
    await loop._save_state()
    _as_from_scratch(alerts, loop.state)
    first = _part_rows(tmp_path / "og.db")
    [h_seq] = [
        s for s, (name, text) in enumerate(alerts.load_state(C).parts) if '"h"' in text and name == "commits"
    ]

    clock[0] += 60
    await sink.on_events([commit_event(600, 3, at + 60_000, "g", 0)])  # g moves, h does not
    await loop.evaluate_now()
    await loop._save_state()
    _as_from_scratch(alerts, loop.state)
    again = _part_rows(tmp_path / "og.db")
    assert again[h_seq] == first[h_seq]  # h's commit: the same object, its part not written again
    assert again != first

    # the load of a restart: exactly the state
    second = _loop(alerts, clock)
    await second.start()
    assert second.state == replace(loop.state, swept=None)
    await second.stop()


async def test_save_state_store_not_holding_the_last_save_refused_then_saved_whole(
    alerts: AlertStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A save by change against parts the store no longer holds is refused whole (logged); the next
    save writes every part."""
    monkeypatch.setattr(state_codec, "CHUNK_ROWS", 1)
    clock = [time.time()]
    loop = _loop(alerts, clock)
    await loop.start()
    at = int(clock[0] * 1000)
    sink = DetectionTailSink(loop)
    await sink.on_events([commit_event(500, 1, at, "g", 0), commit_event(700, 2, at, "h", 1)])
    await loop.evaluate_now()
    await loop._save_state()
    before = alerts.load_state(C)
    assert before is not None
    [h_seq] = [s for s, (name, text) in enumerate(before.parts) if '"h"' in text and name == "commits"]
    with sqlite3.connect(tmp_path / "og.db") as conn:  # h's part, not to be written again, gone
        conn.execute("DELETE FROM detection_state_parts WHERE cluster = ? AND seq = ?", (C, h_seq))

    await sink.on_events([commit_event(600, 3, at + 60_000, "g", 0)])
    await loop.evaluate_now()
    await loop._save_state()
    assert "state not saved" in caplog.text
    parts = before.parts[:h_seq] + before.parts[h_seq + 1 :]
    assert alerts.load_state(C) == before._replace(parts=parts)  # nothing of that save written

    await loop._save_state()  # the state is not the one saved: saved again, whole
    _as_from_scratch(alerts, loop.state)
    await loop.stop()


async def test_save_state_unexpected_error_logged_detection_goes_on_next_save_whole(
    alerts: AlertStore, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A save failing with an error that is not the store's (a bug in encoding) is logged and does not
    end detection: it evaluates on, and the next save writes every part."""
    clock = [time.time()]
    loop = _loop(alerts, clock)
    await loop.start()
    at = int(clock[0] * 1000)
    sink = DetectionTailSink(loop)
    await sink.on_events([commit_event(500, 1, at)])
    await loop.evaluate_now()
    encode = state_codec.encode_changes

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("encoder bug")

    monkeypatch.setattr(state_codec, "encode_changes", broken)
    await loop._save_state()  # does not raise
    assert "state not saved" in caplog.text and "encoder bug" in caplog.text
    assert alerts.load_state(C) is None

    monkeypatch.setattr(state_codec, "encode_changes", encode)
    await sink.on_events([commit_event(600, 2, at + 60_000)])
    await loop.evaluate_now()  # detection goes on
    await loop._save_state()
    _as_from_scratch(alerts, loop.state)
    await loop.stop()


async def _saving_loop(
    alerts: AlertStore, quiet_for: Callable[[], float]
) -> tuple[DetectionLoop, DetectionTailSink]:
    """A started loop whose saves fall due 0.05 s apart, evaluating each commit at once; ``quiet_for``: the
    /metrics endpoint's answer."""
    settings = DetectionSettings(
        debounce_seconds=0.01, state_save_seconds=0.05, min_evaluation_interval_seconds=0
    )
    loop = DetectionLoop(C, settings, latest=LatestObservations(), alerts=alerts, tail_live=lambda: True)
    loop.metrics_quiet_for = quiet_for
    await loop.start()
    return loop, DetectionTailSink(loop)


async def _evaluated(loop: DetectionLoop, sink: DetectionTailSink, offset: int) -> None:
    """A commit through the tail sink, and the loop's own run evaluating it (its saves are checked there)."""
    before = loop.evaluations
    await sink.on_events([commit_event(offset, offset, int(time.time() * 1000))])
    deadline = time.monotonic() + 10
    while loop.evaluations == before:
        assert time.monotonic() < deadline, "not evaluated in 10 s"
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)  # a save after it is under way or done


async def _saved(alerts: AlertStore) -> bool:
    """Whether the state is stored, waiting up to 10 s for a save under way (it runs after the evaluation)."""
    deadline = time.monotonic() + 10
    while alerts.load_state(C) is None:
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.01)
    return True


async def test_save_due_waits_while_metrics_expects_a_render_then_saved_in_the_quiet(
    alerts: AlertStore,
) -> None:
    quiet = [0.0]
    loop, sink = await _saving_loop(alerts, lambda: quiet[0])
    await asyncio.sleep(0.1)  # the save's period passed
    await _evaluated(loop, sink, 500)
    await _evaluated(loop, sink, 501)
    assert alerts.load_state(C) is None  # due twice, a render expected each time
    quiet[0] = math.inf
    await _evaluated(loop, sink, 502)
    assert await _saved(alerts)
    await loop.stop()


async def test_save_due_never_waits_for_a_quiet_beyond_the_bound(
    alerts: AlertStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop, sink = await _saving_loop(alerts, lambda: 0.0)  # always a render expected
    await _evaluated(loop, sink, 500)
    assert alerts.load_state(C) is None
    monkeypatch.setattr(save_timing, "DEFER_MAX_S", 0.2)
    await asyncio.sleep(0.3)  # past the period and the bound
    await _evaluated(loop, sink, 501)
    assert await _saved(alerts)
    await loop.stop()
