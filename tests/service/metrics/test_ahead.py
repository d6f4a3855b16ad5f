"""When a render ahead of a scraper's next scrape is planned (pure timing, no endpoint)."""

from __future__ import annotations

import pytest

from service.metrics.ahead import MAX_GAP_S, MIN_GAP_S, Ahead, Cadence

RENDER_S = 2.0  # the last render's duration the tests plan with


def _steady(*times: float) -> Cadence:
    cadence = Cadence()
    for t in times:
        cadence.scraped(t, answered=False)
    return cadence


def test_cadence_one_scrape_nothing_planned() -> None:
    assert _steady(100.0).plan(RENDER_S) is None


def test_cadence_steady_gap_planned_lead_before_due_answers_lead_after() -> None:
    # lead = 1.5 x 2 s + 0.5 s = 3.5 s around the predicted 130
    assert _steady(100.0, 115.0).plan(RENDER_S) == Ahead(126.5, 133.5)


def test_cadence_lead_at_most_half_the_gap() -> None:
    assert _steady(100.0, 106.0).plan(10.0) == Ahead(109.0, 115.0)


@pytest.mark.parametrize("gap", [MIN_GAP_S - 0.1, MAX_GAP_S + 1.0])
def test_cadence_gap_outside_bounds_nothing_planned(gap: float) -> None:
    assert _steady(100.0, 100.0 + gap).plan(RENDER_S) is None


@pytest.mark.parametrize("gap", [MIN_GAP_S, MAX_GAP_S])
def test_cadence_gap_at_bounds_planned(gap: float) -> None:
    assert _steady(100.0, 100.0 + gap).plan(RENDER_S) is not None


def test_cadence_render_ahead_unused_next_scrape_plans_none_then_again() -> None:
    cadence = _steady(100.0, 115.0)
    cadence.started_ahead()
    cadence.scraped(160.0, answered=False)  # the planned body went unused: the scraper was away
    assert cadence.plan(RENDER_S) is None
    cadence.scraped(175.0, answered=False)
    assert cadence.plan(RENDER_S) == Ahead(186.5, 193.5)


def test_cadence_render_ahead_answered_keeps_planning() -> None:
    cadence = _steady(100.0, 115.0)
    cadence.started_ahead()
    cadence.scraped(130.0, answered=True)
    assert cadence.plan(RENDER_S) == Ahead(141.5, 148.5)


def test_cadence_miss_without_render_ahead_keeps_planning() -> None:
    cadence = _steady(100.0, 115.0, 130.0)  # every scrape rendered on demand: no render ahead wasted
    assert cadence.plan(RENDER_S) == Ahead(141.5, 148.5)
