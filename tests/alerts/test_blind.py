from dataclasses import replace

from alerts.blind import MAX_SPANS, blind_seconds, clean_since, seen, settling
from alerts.lag_alerts import detect_lag
from alerts.model import CONSUMER_STALLED, LAG_HIGH
from alerts.retention import detect_retention_risk
from alerts.state import BlindSpan, DetectionState
from alerts.thresholds import Limits, Thresholds
from collectors.model import Failure, OffsetsObservation
from tests.alerts.builders import TH, C, T, committed, inputs, kinds, offsets, run

G = ("g", T, 0)
BLIND = replace(TH, blind_gap_seconds=30.0)


def _cycles(
    points: list[tuple[float, int, int, int]], th: Thresholds = BLIND, s: DetectionState | None = None
) -> DetectionState:
    """Cycles of (at, log start, log end, committed) on one partition."""
    s = s or DetectionState()
    for at, start, end, c in points:
        s = run(
            s, inputs(offsets=offsets(at, {(T, 0): (start, end)}), committed=committed(at, {G: c})), at, th
        )
    return s


def test_seen_a_gap_longer_than_the_threshold_is_a_blind_span() -> None:
    s = _cycles([(0, 0, 10, 10), (5, 0, 10, 10), (30, 0, 10, 10), (100, 0, 10, 10)])
    assert s.blind_spans == (BlindSpan(30, 100),) and s.offsets_seen_at == 100


def test_seen_no_spans_without_a_threshold() -> None:
    s = _cycles([(0, 0, 10, 10), (1000, 0, 10, 10)], TH)
    assert s.blind_spans == () and s.offsets_seen_at == 1000


def test_seen_an_observation_of_failures_only_is_not_a_sighting() -> None:
    s = _cycles([(0, 0, 10, 10)])
    failed = OffsetsObservation(C, 60, (), (Failure("broker", "1", "BrokerUnavailable", "down"),))
    s = run(s, inputs(offsets=failed), 60, BLIND)
    assert s.offsets_seen_at == 0 and s.blind_spans == ()
    assert seen(s, inputs(offsets=offsets(90, {(T, 0): (0, 10)})), BLIND).blind_spans == (BlindSpan(0, 90),)


def test_seen_an_older_observation_does_not_move_the_sighting_back() -> None:
    s = _cycles([(0, 0, 10, 10), (50, 0, 10, 10)])
    assert seen(s, inputs(offsets=offsets(40, {(T, 0): (0, 10)})), BLIND) == (50, s.blind_spans)


def test_seen_keeps_the_last_spans_only() -> None:
    s = _cycles([(i * 100.0, 0, 10, 10) for i in range(MAX_SPANS + 5)])
    assert len(s.blind_spans) == MAX_SPANS and s.blind_spans[-1] == BlindSpan((MAX_SPANS + 3) * 100.0, 2000)


def test_blind_seconds_overlap_of_each_span() -> None:
    spans = (BlindSpan(10, 20), BlindSpan(50, 80))
    assert blind_seconds(spans, 0, 100) == 40
    assert blind_seconds(spans, 15, 60) == 15
    assert blind_seconds(spans, 80, 100) == 0
    assert clean_since(spans) == 80 and clean_since(()) is None
    assert settling(spans, 139) and not settling(spans, 140) and not settling((), 0)
    assert settling(spans, 99, settle=20) and not settling(spans, 100, settle=20)


def test_retention_no_rate_across_a_blind_spell_then_from_the_first_move_after_it() -> None:
    # retention moves the log start 10/s; a stopped group at 9_000; offsetguard blind from 100 to 400
    s = _cycles([(0, 0, 10_000, 9_000), (100, 1_000, 10_000, 9_000)])
    s = run(
        s,
        inputs(offsets=offsets(400, {(T, 0): (4_000, 10_000)}), committed=committed(400, {G: 9_000})),
        400,
        BLIND,
    )
    for at in (430, 460):  # the log start's first move after the spell (at 430) may be a catch-up
        inp = inputs(offsets=offsets(at, {(T, 0): (at * 10, 10_000)}), committed=committed(at, {G: 9_000}))
        assert detect_retention_risk(s, inp, at, BLIND) == ()
        s = run(s, inp, at, BLIND)
    inp = inputs(offsets=offsets(490, {(T, 0): (4_900, 10_000)}), committed=committed(490, {G: 9_000}))
    [f] = detect_retention_risk(s, inp, 490, BLIND)  # a minute since that move: rates from it only
    assert f.evidence["log_start_rate_per_s"] == 10.0 and f.magnitude["seconds_to_loss"] == 410.0


def test_retention_catch_up_after_an_outage_is_not_a_rate() -> None:
    # 2/s produced and consumed (the group keeps up 10 behind), retention 600 s; all brokers down from
    # 100 to 250: at their first retention check after the restart they delete what expired meanwhile
    # (300 at once), then go on deleting 2/s
    s = _cycles([(float(at), 2 * at, 1_200 + 2 * at, 1_190 + 2 * at) for at in range(0, 101, 5)])
    points = [(255.0, 200, 1_510, 1_500), (260.0, 510, 1_520, 1_510)]  # restart, then the catch-up
    points += [(float(at), 2 * at, 1_200 + 2 * at, 1_190 + 2 * at) for at in range(265, 400, 5)]
    for at, start, end, c in points:
        inp = inputs(offsets=offsets(at, {(T, 0): (start, end)}), committed=committed(at, {G: c}))
        assert detect_retention_risk(s, inp, at, BLIND) == (), at
        s = run(s, inp, at, BLIND)


def test_retention_no_start_rate_across_a_log_that_went_back() -> None:
    # the log start jumped 0 -> 5_000 while a truncation took the log end back: no rate across it
    s = _cycles([(0, 0, 10_000, 6_000), (60, 0, 10_000, 6_000), (100, 5_000, 8_000, 6_000)], TH)
    inp = inputs(offsets=offsets(130, {(T, 0): (5_000, 8_000)}), committed=committed(130, {G: 6_000}))
    assert detect_retention_risk(s, inp, 130, TH) == ()


def test_lag_seconds_leave_out_a_blind_spell() -> None:
    th = replace(BLIND, default=Limits(lag_messages=None, lag_seconds=300, stall_seconds=400))
    # the log end reached 101 at 10; the cluster down from 20 to 600; the group not moved since
    s = _cycles([(0, 0, 100, 100), (10, 0, 150, 100), (20, 0, 150, 100)], th)
    inp = inputs(offsets=offsets(600, {(T, 0): (0, 150)}), committed=committed(600, {G: 100}))
    assert detect_lag(s, inp, 600, th) == ()  # 10 s of lag offsetguard could see
    s = _cycles([(at, 0, 150, 100) for at in range(600, 900, 20)], th, s)
    inp = inputs(offsets=offsets(900, {(T, 0): (0, 150)}), committed=committed(900, {G: 100}))
    [f] = detect_lag(s, inp, 900, th)  # 310 s seen: over lag_seconds, not yet over stall_seconds
    assert f.kind == LAG_HIGH and f.magnitude["lag_seconds"] == 890  # the lag reported is the whole
    s = _cycles([(at, 0, 150, 100) for at in range(900, 1000, 20)], th, s)
    inp = inputs(offsets=offsets(1000, {(T, 0): (0, 150)}), committed=committed(1000, {G: 100}))
    assert kinds(detect_lag(s, inp, 1000, th)) == [LAG_HIGH, CONSUMER_STALLED]


def test_lag_found_before_a_blind_spell_is_still_found_after_it() -> None:
    th = replace(BLIND, default=Limits(lag_messages=None, lag_seconds=None, stall_seconds=60))
    s = _cycles([(at, 0, 100, 90) for at in (0, 10, 30, 50, 70)], th)
    inp = inputs(offsets=offsets(75, {(T, 0): (0, 100)}), committed=committed(75, {G: 90}))
    assert kinds(detect_lag(s, inp, 75, th)) == [CONSUMER_STALLED]
    s = run(s, inp, 75, th)
    inp = inputs(offsets=offsets(500, {(T, 0): (0, 100)}), committed=committed(500, {G: 90}))
    assert kinds(detect_lag(s, inp, 500, th)) == [CONSUMER_STALLED]  # right after the spell: still stalled
