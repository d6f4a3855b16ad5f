"""TailProgress bookkeeping, the rate meter, backoff and GC tuning."""

from __future__ import annotations

import gc

import pytest

from collectors.tail_progress import Backoff, RateMeter, TailProgress, tune_gc


def test_rate_meter_steady_total_reports_slope_over_window() -> None:
    meter = RateMeter(window=10.0, sample_every=0.5)
    for second in range(30):
        meter.sample(float(second), second * 1000)

    assert meter.rate(29.0, 29_000) == pytest.approx(1000.0)
    assert RateMeter().rate(5.0, 100) == 0.0


def test_tail_progress_caught_up_latches_once_targets_reached() -> None:
    progress = TailProgress()
    progress.set_targets({0: 10, 1: 0})
    progress.deliver({0: 9, 1: 0})
    behind = progress.caught_up
    progress.deliver({0: 10})
    progress.set_targets({0: 50})  # a reconnect does not move the goal
    progress.deliver({0: 3})  # e.g. an out-of-range reset to the log start

    assert (behind, progress.caught_up, progress.targets) == (False, True, {0: 10, 1: 0})


def test_tail_progress_missing_topic_nothing_to_catch_up() -> None:
    progress = TailProgress()
    progress.nothing_to_catch_up()

    assert progress.caught_up is True


def test_tail_progress_unsaved_only_changed_positions() -> None:
    progress = TailProgress()
    progress.set_stored({0: 5, 1: 7})
    progress.deliver({0: 5, 1: 9, 2: 1})

    assert progress.unsaved() == {1: 9, 2: 1}
    progress.mark_saved({1: 9, 2: 1}, at=42.0)
    assert (progress.unsaved(), progress.last_checkpoint_at) == ({}, 42.0)


def test_tail_progress_lag_never_negative() -> None:
    progress = TailProgress()
    progress.update_ends({0: 10, 1: 5, 2: 3})
    progress.deliver({0: 4, 1: 6})

    assert progress.lag() == {0: 6, 1: 0}


def test_backoff_doubles_to_cap_and_resets() -> None:
    backoff = Backoff(0.5, 2.0)
    delays = [backoff.next() for _ in range(4)]
    backoff.reset()

    assert (delays, backoff.next()) == ([0.5, 1.0, 2.0, 2.0], 0.5)


def test_tune_gc_default_threshold_raised_never_lowered() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        tune_gc(5000)
        raised = gc.get_threshold()
        tune_gc(1000)
        kept = gc.get_threshold()
    finally:
        gc.set_threshold(*before)

    assert (raised, kept) == ((5000, 10, 10), (5000, 10, 10))
