"""Threshold overrides: keys are regular expressions over the whole name, the first match wins."""

from __future__ import annotations

from alerts.thresholds import Limits, Override, Thresholds


def test_thresholds_exact_names_keep_working() -> None:
    t = Thresholds(topics={"orders": Override(lag_messages=5)}, groups={"billing": Override(lag_seconds=9.0)})
    limits = t.limits("billing", "orders")
    assert (limits.lag_messages, limits.lag_seconds) == (5, 9.0)
    assert t.limits("billing-2", "orders-eu") == Limits()  # fully matched: no prefix match


def test_thresholds_patterns_first_match_in_order_wins() -> None:
    t = Thresholds(
        groups={
            "batch-.*": Override(lag_messages=1_000_000),
            "batch-nightly": Override(lag_messages=1),  # after a pattern that matches it: never used
            ".*": Override(stall_seconds=None),
        }
    )
    assert t.limits("batch-nightly", None).lag_messages == 1_000_000
    assert t.limits("batch-nightly", None).stall_seconds == 900.0  # only the first match applies
    assert t.limits("web", None).stall_seconds is None


def test_thresholds_group_pattern_beats_topic_pattern() -> None:
    t = Thresholds(
        topics={"logs-.*": Override(lag_messages=7)}, groups={"audit|billing": Override(lag_messages=3)}
    )
    assert t.limits("audit", "logs-eu").lag_messages == 3
    assert t.limits("other", "logs-eu").lag_messages == 7


def test_thresholds_answers_memoised_per_group_and_topic() -> None:
    t = Thresholds(groups={"g.*": Override(lag_messages=2)})
    assert t.limits("g1", "t") is t.limits("g1", "t")
