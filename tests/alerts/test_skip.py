from alerts.engine import evaluate
from alerts.model import OFFSET_REWIND, OFFSET_SKIP
from alerts.skip import detect_offset_skips
from alerts.state import DetectionState
from tests.alerts.builders import TH, T, commit, committed, groups, inputs, kinds, offsets, run

G = ("g", T, 0)


def _fell_below_start(state: str = "Stable") -> DetectionState:
    s = run(
        DetectionState(),
        inputs(
            offsets=offsets(10, {(T, 0): (0, 1000)}),
            committed=committed(10, {G: 100}),
            groups=groups(10, {"g": state}),
        ),
        10,
    )
    return run(
        s,
        inputs(
            offsets=offsets(20, {(T, 0): (200, 1000)}),
            committed=committed(20, {G: 100}),
            groups=groups(20, {"g": state}),
        ),
        20,
    )


def test_detect_offset_skips_reset_to_latest_after_retention_critical_skipped_counts() -> None:
    inp = inputs(
        offsets=offsets(30, {(T, 0): (200, 1100)}),
        committed=committed(30, {G: 1100}),
        groups=groups(30, {"g": "Stable"}),
    )
    [f] = detect_offset_skips(_fell_below_start(), inp, 30, TH)
    assert (f.kind, f.severity, f.cause) == (OFFSET_SKIP, "critical", "auto_reset_latest")
    assert f.magnitude == {"messages_skipped": 1000, "messages_deleted_unread": 100}
    assert f.evidence["old_offset_was"] == "below_log_start"


def test_detect_offset_skips_reset_to_log_start_after_retention_auto_reset_earliest() -> None:
    inp = inputs(
        offsets=offsets(30, {(T, 0): (200, 1100)}),
        committed=committed(30, {G: 200}),
        groups=groups(30, {"g": "Stable"}),
    )
    [f] = detect_offset_skips(_fell_below_start(), inp, 30, TH)
    assert (f.cause, f.magnitude["messages_skipped"]) == ("auto_reset_earliest", 100)


def test_detect_offset_skips_group_empty_admin_reset_info() -> None:
    inp = inputs(
        offsets=offsets(30, {(T, 0): (200, 1100)}),
        committed=committed(30, {G: 1100}),
        groups=groups(30, {"g": "Empty"}),
    )
    [f] = detect_offset_skips(_fell_below_start("Empty"), inp, 30, TH)
    assert (f.severity, f.cause) == ("info", "admin_reset")


def test_detect_offset_skips_large_jump_from_fetchable_offset_nothing() -> None:
    s = run(
        DetectionState(),
        inputs(offsets=offsets(10, {(T, 0): (0, 100_000)}), committed=committed(10, {G: 5})),
        10,
    )
    inp = inputs(offsets=offsets(20, {(T, 0): (0, 100_000)}), committed=committed(20, {G: 100_000}))
    assert detect_offset_skips(s, inp, 20, TH) == ()


def test_detect_offset_skips_retention_passed_old_only_after_the_move_nothing() -> None:
    # The group read on to the log end; only the later observation shows the log start past its old offset.
    s = run(
        DetectionState(),
        inputs(offsets=offsets(10, {(T, 0): (0, 150)}), committed=committed(10, {G: 100})),
        10,
    )
    inp = inputs(offsets=offsets(40, {(T, 0): (120, 200)}), committed=committed(40, {G: 200}))
    assert detect_offset_skips(s, inp, 40, TH) == ()


def test_detect_offset_skips_reset_past_last_sample_while_retention_moves_auto_reset_earliest() -> None:
    from tests.alerts.builders import commit

    s = run(DetectionState(), inputs(commit_events=(commit(100, 1, 1),), tail_live=True), 1)
    for t, start in ((2, 90), (3, 95), (4, 100), (5, 105)):  # retention deletes ~5 messages a second
        s = run(s, inputs(offsets=offsets(t, {(T, 0): (start, 400)}), tail_live=True), t)
    # the consumer's fetch at 100 fails, it resets to the log start (now 108) and commits, before the
    # next range observation
    [f] = detect_offset_skips(s, inputs(commit_events=(commit(108, 5.5, 2),), tail_live=True), 5.5, TH)
    assert (f.cause, f.magnitude["messages_skipped"]) == ("auto_reset_earliest", 8)


def test_detect_offset_skips_reset_past_last_sample_segment_sized_jump_auto_reset_earliest() -> None:
    from tests.alerts.builders import commit

    s = run(DetectionState(), inputs(commit_events=(commit(100, 1, 1),), tail_live=True), 1)
    for t, start in ((2, 90), (3, 90), (4, 100), (5, 100), (6, 110)):  # whole 10-message segments go
        s = run(s, inputs(offsets=offsets(t, {(T, 0): (start, 400)}), tail_live=True), t)
    [f] = detect_offset_skips(s, inputs(commit_events=(commit(120, 6.2, 2),), tail_live=True), 6.2, TH)
    assert (f.cause, f.magnitude["messages_skipped"]) == ("auto_reset_earliest", 20)


def _truncated(state: str = "Stable") -> DetectionState:
    # 150 committed; an unclean election truncates the log end from 150 to 100 under the group
    s = run(
        DetectionState(),
        inputs(
            offsets=offsets(10, {(T, 0): (0, 150)}),
            committed=committed(10, {G: 150}),
            groups=groups(10, {"g": state}),
        ),
        10,
    )
    return run(
        s,
        inputs(
            offsets=offsets(20, {(T, 0): (0, 100)}),
            committed=committed(20, {G: 150}),
            groups=groups(20, {"g": state}),
        ),
        20,
    )


def test_detect_offset_skips_reset_latest_from_beyond_truncated_end_nothing_produced_warning() -> None:
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 100)}), committed=committed(30, {G: 100}))
    [f] = detect_offset_skips(_truncated(), inp, 30, TH)
    assert (f.kind, f.severity, f.cause) == (OFFSET_SKIP, "warning", "auto_reset_latest")
    assert f.magnitude["messages_skipped"] == 0
    assert (f.evidence["old_offset"], f.evidence["new_offset"]) == (150, 100)
    assert f.evidence["log_end_after_truncation"] == 100
    assert f.evidence["note"] == "committed offset was beyond the log end"
    assert f.evidence["old_offset_was"] == "beyond_log_end"


def test_detect_offset_skips_reset_latest_from_beyond_truncated_end_after_produce_critical() -> None:
    # 20 messages written between the truncation (log end 100) and the reset to the log end 120
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 120)}), committed=committed(30, {G: 120}))
    [f] = detect_offset_skips(_truncated(), inp, 30, TH)
    assert (f.kind, f.severity, f.cause) == (OFFSET_SKIP, "critical", "auto_reset_latest")
    assert f.magnitude["messages_skipped"] == 20
    assert (f.evidence["old_offset"], f.evidence["new_offset"]) == (150, 120)
    assert f.evidence["log_end_after_truncation"] == 100


def test_detect_offset_skips_reset_latest_from_beyond_tail_seen_before_next_range_sample() -> None:
    prev = run(
        DetectionState(),
        inputs(offsets=offsets(10, {(T, 0): (0, 150)}), commit_events=(commit(150, 10, 1),), tail_live=True),
        10,
    )
    prev = run(prev, inputs(offsets=offsets(20, {(T, 0): (0, 100)}), tail_live=True), 20)
    prev = run(prev, inputs(commit_events=(commit(150, 25, 2),), tail_live=True), 25)  # auto-commit
    [f] = detect_offset_skips(prev, inputs(commit_events=(commit(100, 30, 3),), tail_live=True), 30, TH)
    assert (f.cause, f.severity, f.magnitude["messages_skipped"]) == ("auto_reset_latest", "warning", 0)


def test_evaluate_reset_latest_from_beyond_truncated_end_skip_and_no_rewind() -> None:
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 100)}), committed=committed(30, {G: 100}))
    findings, _ = evaluate(_truncated(), inp, 30, TH)
    moves = [f for f in findings if f.group == "g" and f.kind in (OFFSET_SKIP, OFFSET_REWIND)]
    assert kinds(tuple(moves)) == [OFFSET_SKIP]


def test_detect_offset_skips_reset_latest_from_beyond_group_empty_still_auto_reset_latest() -> None:
    inp = inputs(
        offsets=offsets(30, {(T, 0): (0, 100)}),
        committed=committed(30, {G: 100}),
        groups=groups(30, {"g": "Empty"}),
    )
    [f] = detect_offset_skips(_truncated("Empty"), inp, 30, TH)
    assert (f.cause, f.severity) == ("auto_reset_latest", "warning")


def test_detect_offset_skips_reset_earliest_from_beyond_truncated_end_not_a_skip() -> None:
    # the same situation reset to the log start stays an offset_rewind (auto_reset_earliest)
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 100)}), committed=committed(30, {G: 0}))
    assert detect_offset_skips(_truncated(), inp, 30, TH) == ()


def test_detect_offset_skips_move_back_below_truncated_end_not_at_log_end_not_a_skip() -> None:
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 100)}), committed=committed(30, {G: 60}))
    assert detect_offset_skips(_truncated(), inp, 30, TH) == ()


def test_detect_offset_skips_reset_to_a_log_start_newer_than_the_samples_all_deleted_unread() -> None:
    # the tail sees the reset before the range is sampled again: retention has moved the start past 200
    inp = inputs(commit_events=(commit(300, 25, 1),), groups=groups(25, {"g": "Stable"}), tail_live=True)
    [f] = detect_offset_skips(_fell_below_start(), inp, 25, TH)
    assert f.cause == "auto_reset_earliest"
    assert f.magnitude == {"messages_skipped": 200, "messages_deleted_unread": 200}
