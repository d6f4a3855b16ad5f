from dataclasses import replace

import pytest

from alerts.model import EPOCH_DIVERGENCE, LAG_HIGH, OFFSET_SKIP, Finding
from service.detection.lifecycle import LifecycleRules, new_alert_id, occurrence_identity, plan
from store.alert_records import Alert, AlertWrite, Fingerprint
from tests.service.detection.builders import T, lag, rewind

RULES = LifecycleRules(quiet_period_seconds=100.0, resolve_after_clean=3, refresh_seconds=30.0)
ALL = frozenset({LAG_HIGH})


def _apply(firing: dict[Fingerprint, Alert], writes: tuple[AlertWrite, ...]) -> dict[Fingerprint, Alert]:
    out = dict(firing)
    for w in writes:
        if w.alert.firing:
            out[w.alert.fingerprint] = w.alert
        else:
            out.pop(w.alert.fingerprint, None)
    return out


def test_plan_new_finding_fires_one_alert() -> None:
    p = plan({}, [rewind()], ALL, {}, 10.0, RULES)
    [w] = p.writes
    assert (w.insert, w.transition, w.alert.status, w.alert.occurrences) == (True, "fired", "firing", 1)
    assert (w.alert.started_at, w.alert.magnitude["messages_replayed"]) == (10.0, 200)


def test_plan_same_fingerprint_twice_in_one_cycle_one_alert_two_occurrences_summed() -> None:
    p = plan({}, [rewind(500, 300, at=2.0), rewind(400, 350, at=3.0)], ALL, {}, 10.0, RULES)
    firing = _apply({}, p.writes)
    [a] = firing.values()
    assert (a.occurrences, a.magnitude["messages_replayed"], a.magnitude_total["messages_replayed"]) == (
        2,
        50,
        250,
    )
    assert [w.transition for w in p.writes] == ["fired", "repeated"]


def test_plan_same_occurrence_reclassified_not_counted_twice() -> None:
    firing = _apply({}, plan({}, [rewind(cause="unknown")], ALL, {}, 10.0, RULES).writes)
    again = rewind(cause="rebalance_recommit", undone_by_offset=510, undone_at=5.0)
    p = plan(firing, [again], ALL, {}, 11.0, RULES)
    [w] = p.writes
    assert (w.insert, w.transition, w.alert.cause, w.alert.occurrences) == (
        False,
        "reclassified",
        "rebalance_recommit",
        1,
    )
    assert w.alert.magnitude_total["messages_replayed"] == 200


def _skip(old: int, new: int, magnitude: dict[str, int | None]) -> Finding:
    return Finding(
        kind=OFFSET_SKIP,
        severity="info",
        cluster="c",
        group="g",
        topic="t",
        partition=0,
        summary=f"moved from {old} to {new}",
        cause="admin_reset",
        magnitude=magnitude,
        evidence={"old_offset": old, "new_offset": new},
    )


def test_plan_occurrences_bounds_add_up_with_the_exact_figures_of_those_without_one() -> None:
    """An operator's exact skip of 200, then a departing member's last commit (at most 6, none certain):
    together 200 certain and at most 206, never at most 6 below the certain 200."""
    exact = _skip(100, 300, {"messages_skipped": 200, "messages_read_past": 0})
    bound = _skip(300, 306, {"messages_skipped": 0, "messages_skipped_max": 6})
    firing = _apply({}, plan({}, [exact], ALL, {}, 10.0, RULES).writes)
    [w] = plan(firing, [bound], ALL, {}, 11.0, RULES).writes
    assert (w.alert.occurrences, w.alert.magnitude_total) == (
        2,
        {"messages_skipped": 200, "messages_read_past": 0, "messages_skipped_max": 206},
    )
    unknown = _skip(306, 400, {"messages_skipped": 0, "messages_skipped_max": None})
    [w] = plan(_apply(firing, (w,)), [unknown], ALL, {}, 12.0, RULES).writes
    assert w.alert.magnitude_total["messages_skipped_max"] is None


def test_plan_same_occurrence_reported_again_with_a_bound_replaces_its_share_of_the_bound() -> None:
    first = _skip(100, 300, {"messages_skipped": 200})
    later = _skip(300, 306, {"messages_skipped": 0, "messages_skipped_max": 6})
    firing = _apply({}, plan({}, [first, later], ALL, {}, 10.0, RULES).writes)
    again = replace(
        later,
        cause="member_left_or_admin_reset",
        magnitude={"messages_skipped": 0, "messages_skipped_max": 9},
    )
    [w] = plan(firing, [again], ALL, {}, 11.0, RULES).writes
    assert (w.transition, w.alert.magnitude_total) == (
        "reclassified",
        {"messages_skipped": 200, "messages_skipped_max": 209},
    )


def test_plan_event_like_quiet_period_passes_resolved() -> None:
    firing = _apply({}, plan({}, [rewind()], ALL, {}, 10.0, RULES).writes)
    assert plan(firing, [], ALL, {}, 109.0, RULES).writes == ()
    [w] = plan(firing, [], ALL, {}, 110.0, RULES).writes
    assert (w.alert.status, w.alert.resolved_reason, w.alert.resolved_at) == (
        "resolved",
        "quiet_period",
        110.0,
    )


def test_plan_event_like_repeat_restarts_quiet_period() -> None:
    firing = _apply({}, plan({}, [rewind(at=2.0)], ALL, {}, 10.0, RULES).writes)
    firing = _apply(firing, plan(firing, [rewind(at=60.0)], ALL, {}, 60.0, RULES).writes)
    assert plan(firing, [], ALL, {}, 150.0, RULES).writes == ()


def test_plan_state_like_resolves_after_n_clean_covered_evaluations() -> None:
    p = plan({}, [lag()], ALL, {}, 10.0, RULES)
    firing, streaks = _apply({}, p.writes), p.clean_streaks
    resolved_at = None
    for now in (11.0, 12.0, 13.0):
        p = plan(firing, [], ALL, streaks, now, RULES)
        firing, streaks = _apply(firing, p.writes), p.clean_streaks
        if not firing and resolved_at is None:
            resolved_at = now
            assert p.writes[0].alert.resolved_reason == "cleared"
    assert resolved_at == 13.0


def test_plan_state_like_uncovered_evaluation_not_counted_clean() -> None:
    firing = _apply({}, plan({}, [lag()], ALL, {}, 10.0, RULES).writes)
    streaks: dict[Fingerprint, int] = {}
    for now in range(11, 20):
        p = plan(firing, [], frozenset(), streaks, float(now), RULES)
        firing, streaks = _apply(firing, p.writes), dict(p.clean_streaks)
    assert len(firing) == 1


@pytest.mark.parametrize("kind", [LAG_HIGH, EPOCH_DIVERGENCE])
def test_plan_state_like_alert_of_a_partition_without_a_log_range_not_counted_clean(kind: str) -> None:
    # its partition offline through a broker's restart: the offsets observation has no range for it, so
    # nothing says the lag (or a commit beyond the log end, or past its epoch's end) went away; counted
    # clean, it resolved and fired again, a second page, when the range came back
    covered = frozenset({kind})
    firing = _apply({}, plan({}, [replace(lag(), kind=kind)], covered, {}, 10.0, RULES).writes)
    streaks: dict[Fingerprint, int] = {}
    for now in range(11, 20):
        p = plan(firing, [], covered, streaks, float(now), RULES, unranged=frozenset({(T, 0)}))
        firing, streaks = _apply(firing, p.writes), dict(p.clean_streaks)
    assert len(firing) == 1
    for now in (20.0, 21.0, 22.0):  # another partition's range missing counts nothing here
        p = plan(firing, [], covered, streaks, now, RULES, unranged=frozenset({(T, 1)}))
        firing, streaks = _apply(firing, p.writes), dict(p.clean_streaks)
    assert firing == {}


def test_plan_state_like_reported_again_resets_streak() -> None:
    p = plan({}, [lag()], ALL, {}, 10.0, RULES)
    firing = _apply({}, p.writes)
    p = plan(firing, [], ALL, p.clean_streaks, 11.0, RULES)
    p = plan(firing, [], ALL, p.clean_streaks, 12.0, RULES)
    p = plan(firing, [lag()], ALL, p.clean_streaks, 13.0, RULES)
    p = plan(firing, [], ALL, p.clean_streaks, 14.0, RULES)
    assert p.writes == () and list(p.clean_streaks.values()) == [1]


def test_plan_counts_clean_only_the_firing_alerts_not_reported() -> None:
    # one lag alert reported at every evaluation, one not: only the second resolves, after three
    kept, gone = lag(20_000), replace(lag(20_000), partition=1)
    firing = _apply({}, plan({}, [kept, gone], ALL, {}, 10.0, RULES).writes)
    streaks: dict[Fingerprint, int] = {}
    for now in (11.0, 12.0):
        p = plan(firing, [kept], ALL, streaks, now, RULES)
        firing, streaks = _apply(firing, p.writes), dict(p.clean_streaks)
        assert p.writes == () and streaks == {gone.fingerprint: now - 10.0}
    [w] = plan(firing, [kept], ALL, streaks, 13.0, RULES).writes
    assert (w.alert.fingerprint, w.transition, w.alert.resolved_reason) == (
        gone.fingerprint,
        "resolved",
        "cleared",
    )
    # every firing alert reported (the same one twice): nothing counted, nothing written
    p = plan(_apply(firing, (w,)), [kept, kept], ALL, {}, 14.0, RULES)
    assert (p.writes, dict(p.clean_streaks)) == ((), {})


def test_plan_state_like_unchanged_repeat_refreshed_only_after_refresh_seconds() -> None:
    firing = _apply({}, plan({}, [lag(20_000)], ALL, {}, 10.0, RULES).writes)
    assert plan(firing, [lag(21_000)], ALL, {}, 20.0, RULES).writes == ()
    moved = replace(lag(22_000), evidence={"committed": 5, "log_end": 22_000})
    [w] = plan(firing, [moved], ALL, {}, 40.0, RULES).writes
    assert (w.transition, w.alert.magnitude["lag"], w.alert.magnitude_total["lag"]) == (None, 22_000, 22_000)
    assert w.alert.evidence == moved.evidence
    # a state-like alert's occurrence is never compared: a silent refresh keeps the one it fired with
    [fired] = firing.values()
    assert w.alert.occurrence == fired.occurrence != occurrence_identity(moved)


def test_plan_state_like_severity_change_written_at_once_as_changed() -> None:
    firing = _apply({}, plan({}, [lag()], ALL, {}, 10.0, RULES).writes)
    [w] = plan(firing, [lag(30_000, severity="critical")], ALL, {}, 11.0, RULES).writes
    assert (w.transition, w.alert.severity) == ("changed", "critical")
    assert w.alert.occurrence == occurrence_identity(lag(30_000, severity="critical"))  # changed: re-taken


def test_plan_silent_refreshes_at_most_the_limit_an_evaluation_longest_ago_first_in_turn() -> None:
    """Five lag alerts fired at 10, 11, .. 14 s, all due: two an evaluation, those refreshed longest ago
    first (written in the findings' order), the others standing; every one has its turn, none starves.
    A severity change is written whatever the limit."""
    rules = replace(RULES, refresh_limit=2)
    groups = ["e", "d", "c", "b", "a"]  # the findings' order is not the alerts' age
    firing: dict[Fingerprint, Alert] = {}
    for i, g in enumerate(groups):
        firing = _apply(firing, plan(firing, [lag(100, group=g)], ALL, {}, 10.0 + i, rules).writes)
    ages = {a.group: a.updated_at for a in firing.values()}
    assert ages == {"e": 10.0, "d": 11.0, "c": 12.0, "b": 13.0, "a": 14.0}

    def evaluation(now: float, value: int, *changed: str) -> list[str]:
        nonlocal firing
        findings = [lag(value, group=g, severity="critical" if g in changed else "warning") for g in groups]
        p = plan(firing, findings, ALL, {}, now, rules)
        firing = _apply(firing, p.writes)
        assert {w.transition for w in p.writes} <= {None, "changed"}
        return [w.alert.group for w in p.writes]

    assert evaluation(60.0, 200) == ["e", "d"]  # the two oldest, in the findings' order
    assert {a.group: a.magnitude["lag"] for a in firing.values()} == {
        "e": 200,
        "d": 200,
        "c": 100,
        "b": 100,
        "a": 100,
    }
    assert evaluation(62.5, 300) == ["c", "b"]
    assert evaluation(65.0, 400) == ["a"]  # the others refreshed 2.5 and 5 s ago: not due
    assert evaluation(95.0, 500) == ["e", "d"]  # every one had its turn; the oldest again
    # a change of severity is written at once (the changes first), beside the limit's refreshes
    assert evaluation(97.5, 600, "a") == ["a", "c", "b"]
    assert firing[lag(group="a").fingerprint].severity == "critical"


def test_plan_event_like_lower_severity_repeat_keeps_highest() -> None:
    firing = _apply({}, plan({}, [rewind()], ALL, {}, 10.0, RULES).writes)
    [w] = plan(
        firing, [rewind(300, 100, at=9.0, cause="admin_reset", severity="info")], ALL, {}, 11.0, RULES
    ).writes
    assert (w.alert.severity, w.alert.cause, w.alert.occurrences) == ("critical", "admin_reset", 2)


def test_plan_event_like_occurrence_of_resolved_alert_not_refired() -> None:
    f = rewind()
    resolved = frozenset({(f.fingerprint, occurrence_identity(f))})
    assert plan({}, [f], ALL, {}, 10.0, RULES, resolved=resolved).writes == ()
    [w] = plan({}, [rewind(at=9.0)], ALL, {}, 10.0, RULES, resolved=resolved).writes
    assert w.transition == "fired"


def test_plan_a_skipped_resolved_occurrence_does_not_hide_a_firing_alert_not_reported() -> None:
    """As many fingerprints reported as alerts firing, one of them a resolved occurrence not fired again:
    the firing lag alert was not reported, and counts a clean evaluation."""
    firing = _apply({}, plan({}, [lag()], ALL, {}, 10.0, RULES).writes)
    f = rewind()
    resolved = frozenset({(f.fingerprint, occurrence_identity(f))})
    p = plan(firing, [f], ALL, {}, 11.0, RULES, resolved=resolved)
    assert p.writes == () and dict(p.clean_streaks) == {lag().fingerprint: 1}


def test_alert_ids_of_one_millisecond_are_distinct_and_sort_by_time() -> None:
    burst = {new_alert_id(1_700_000_000.0) for _ in range(100_000)}  # a fleet's burst in one evaluation
    assert len(burst) == 100_000
    assert new_alert_id(1_700_000_000.0) < new_alert_id(1_700_000_000.002)
