from alerts.model import OFFSET_SKIP
from alerts.skip import detect_offset_skips
from alerts.state import DetectionState
from tests.alerts.builders import TH, T, committed, groups, inputs, offsets, run

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
