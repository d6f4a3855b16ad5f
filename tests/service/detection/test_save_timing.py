"""When a state save is due: its period passed and ``/metrics`` expects no render for a while, or it
waited :data:`DEFER_MAX_S` (pure timing, no loop)."""

from __future__ import annotations

import math

from service.detection.save_timing import DEFER_MAX_S, FIRST_SAVE_S, SaveTiming, always_quiet


def test_save_not_due_before_its_period_however_quiet() -> None:
    timing = SaveTiming(every=120.0, last=1000.0)
    assert not timing.due(1119.9, always_quiet)
    assert timing.due(1120.0, always_quiet)


def test_save_due_waits_for_room_twice_its_last_duration_plus_a_second() -> None:
    timing = SaveTiming(every=120.0, last=1000.0)
    assert timing.took == FIRST_SAVE_S  # untimed: room for 2 x 2 + 1 = 5 s wanted
    assert not timing.due(1130.0, lambda: 4.9)
    assert timing.due(1130.0, lambda: 5.0)
    timing.begin(1130.0)
    timing.end(1130.5)  # took 0.5 s: room for 2 s wanted from now on
    assert timing.took == 0.5
    assert not timing.due(1250.0, lambda: 1.9)
    assert timing.due(1250.0, lambda: 2.0)


def test_save_never_waits_more_than_the_bound() -> None:
    timing = SaveTiming(every=120.0, last=1000.0)
    never = 0.0
    assert not timing.due(1120.0 + DEFER_MAX_S - 0.1, lambda: never)
    assert timing.due(1120.0 + DEFER_MAX_S, lambda: never)


def test_save_not_asked_for_quiet_before_its_period() -> None:
    asked: list[float] = []

    def quiet_for() -> float:
        asked.append(1.0)
        return math.inf

    timing = SaveTiming(every=120.0, last=1000.0)
    timing.due(1010.0, quiet_for)
    assert asked == []  # the endpoint's plans are read only when a save is due


def test_save_begun_and_not_stored_keeps_the_last_duration() -> None:
    timing = SaveTiming(every=120.0, last=1000.0, took=0.7)
    timing.begin(1120.0)  # the store refused it: no end()
    assert (timing.last, timing.took) == (1120.0, 0.7)
    assert not timing.due(1200.0, always_quiet)  # the next try one period later, not at once
