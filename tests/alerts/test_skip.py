import pytest

from alerts.engine import evaluate
from alerts.model import COMMITTED_BELOW_LOG_START, OFFSET_REWIND, OFFSET_SKIP, Finding, GroupEvent
from alerts.skip import detect_offset_skips
from alerts.state import CycleInputs, DetectionState
from collectors.model import GroupInfo, GroupsObservation
from tests.alerts.builders import (
    TH,
    C,
    T,
    commit,
    committed,
    group_event,
    groups,
    inputs,
    kinds,
    offsets,
    run,
)

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


def test_detect_offset_skips_landed_on_log_end_after_retention_direction_unknown_critical_bounds() -> None:
    # Was auto_reset_latest with 1000 skipped: a reset to the log start (200) that read on to the log end
    # within one commit looks the same. 100 deleted unread is certain; the other 900 were skipped or read.
    inp = inputs(
        offsets=offsets(30, {(T, 0): (200, 1100)}),
        committed=committed(30, {G: 1100}),
        groups=groups(30, {"g": "Stable"}),
    )
    [f] = detect_offset_skips(_fell_below_start(), inp, 30, TH)
    assert (f.kind, f.severity, f.cause) == (OFFSET_SKIP, "critical", "auto_reset_direction_unknown")
    assert f.magnitude == {
        "messages_skipped": 100,
        "messages_deleted_unread": 100,
        "messages_skipped_max": 1000,
        "messages_read_past_max": 900,
    }
    assert f.evidence["old_offset_was"] == "below_log_start"
    assert "at most 900 skipped" in f.summary and "900 read" in f.summary and "direction unknown" in f.summary


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
    # next range observation: deleted unread only up to the log start observed (105), as
    # committed_below_log_start said; the 3 past it may have been read or deleted since, nothing proves which
    [f] = detect_offset_skips(s, inputs(commit_events=(commit(108, 5.5, 2),), tail_live=True), 5.5, TH)
    assert f.cause == "auto_reset_earliest"
    assert f.magnitude == {"messages_skipped": 5, "messages_deleted_unread": 5, "messages_read_past": 3}


def test_detect_offset_skips_reset_past_last_sample_segment_sized_jump_auto_reset_earliest() -> None:
    from tests.alerts.builders import commit

    s = run(DetectionState(), inputs(commit_events=(commit(100, 1, 1),), tail_live=True), 1)
    for t, start in ((2, 90), (3, 90), (4, 100), (5, 100), (6, 110)):  # whole 10-message segments go
        s = run(s, inputs(offsets=offsets(t, {(T, 0): (start, 400)}), tail_live=True), t)
    [f] = detect_offset_skips(s, inputs(commit_events=(commit(120, 6.2, 2),), tail_live=True), 6.2, TH)
    assert f.cause == "auto_reset_earliest"
    assert f.magnitude == {"messages_skipped": 10, "messages_deleted_unread": 10, "messages_read_past": 10}


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


def test_detect_offset_skips_back_to_truncated_end_nothing_produced_direction_unknown_warning() -> None:
    # a reset to latest (100) or one to earliest (0) that read the 100 kept messages again: unknown
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 100)}), committed=committed(30, {G: 100}))
    [f] = detect_offset_skips(_truncated(), inp, 30, TH)
    assert (f.kind, f.severity, f.cause) == (OFFSET_SKIP, "warning", "auto_reset_direction_unknown")
    assert f.magnitude == {
        "messages_skipped": 0,
        "messages_skipped_max": 0,
        "messages_replayed_max": 100,
        "messages_deleted_unread": 0,
        "messages_read_past": 0,
    }
    assert (f.evidence["old_offset"], f.evidence["new_offset"]) == (150, 100)
    assert f.evidence["log_end_after_truncation"] == 100
    assert f.evidence["note"] == "committed offset was beyond the log end"
    assert f.evidence["old_offset_was"] == "beyond_log_end"


def test_detect_offset_skips_stale_commit_back_to_an_emptied_log_nothing() -> None:
    # A topic re-created (or emptied) under a commit of 50 that its consumer re-commits as 0: log 0..0
    # before the move too, so a reset either way skipped nothing and re-read nothing (truth matrix:
    # aiokafka re-creates a deleted topic and commits 0 on it).
    s = run(
        DetectionState(),
        inputs(offsets=offsets(10, {(T, 0): (0, 50)}), committed=committed(10, {G: 50})),
        10,
    )
    s = run(s, inputs(offsets=offsets(20, {(T, 0): (50, 50)}), committed=committed(20, {G: 50})), 20)
    s = run(s, inputs(offsets=offsets(25, {(T, 0): (0, 0)}), committed=committed(25, {G: 50})), 25)
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 0)}), committed=committed(30, {G: 0}))
    assert detect_offset_skips(s, inp, 30, TH) == ()


def test_detect_offset_skips_back_to_grown_log_end_after_truncation_direction_unknown_bounds() -> None:
    # Was critical, 20 skipped: 20 messages were written between the truncation (log end 100) and the
    # commit of the log end 120, which a reset to latest skipped, and a reset to earliest read after
    # re-reading the 100 kept ones. Nothing certain: a warning with both bounds.
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 120)}), committed=committed(30, {G: 120}))
    [f] = detect_offset_skips(_truncated(), inp, 30, TH)
    assert (f.kind, f.severity, f.cause) == (OFFSET_SKIP, "warning", "auto_reset_direction_unknown")
    assert (f.magnitude["messages_skipped"], f.magnitude["messages_skipped_max"]) == (0, 20)
    assert f.magnitude["messages_replayed_max"] == 100
    assert (f.evidence["old_offset"], f.evidence["new_offset"]) == (150, 120)
    assert f.evidence["log_end_after_truncation"] == 100


def test_detect_offset_skips_librdkafka_reset_after_unclean_truncation_warning_nothing_certain() -> None:
    # The incident once paged as auto_reset_latest, critical, 30 skipped: committed 150 over a log
    # starting at 20, an unclean election truncates to 100, 30 are produced, and a librdkafka consumer
    # (auto.offset.reset=earliest) resets to 20, re-reads 80, reads the 30 new and commits 130.
    s = run(
        DetectionState(),
        inputs(
            offsets=offsets(10, {(T, 0): (20, 150)}),
            commit_events=(group_event("Stable", 5, 1), commit(150, 10, 2)),
            tail_live=True,
        ),
        10,
    )
    s = run(s, inputs(offsets=offsets(20, {(T, 0): (20, 100)}), tail_live=True), 20)
    reset = inputs(
        offsets=offsets(30, {(T, 0): (20, 130)}), commit_events=(commit(130, 29, 3),), tail_live=True
    )
    found, _ = evaluate(s, reset, 30, TH)
    [f] = [f for f in found if f.kind in (OFFSET_SKIP, OFFSET_REWIND)]
    assert (f.kind, f.severity, f.cause) == (OFFSET_SKIP, "warning", "auto_reset_direction_unknown")
    assert f.magnitude == {
        "messages_skipped": 0,
        "messages_skipped_max": 30,
        "messages_replayed_max": 80,
        "messages_deleted_unread": 0,
        "messages_read_past": 0,
    }


def test_detect_offset_skips_back_to_truncated_end_tail_seen_before_next_sample_direction_unknown() -> None:
    prev = run(
        DetectionState(),
        inputs(offsets=offsets(10, {(T, 0): (0, 150)}), commit_events=(commit(150, 10, 1),), tail_live=True),
        10,
    )
    prev = run(prev, inputs(offsets=offsets(20, {(T, 0): (0, 100)}), tail_live=True), 20)
    prev = run(prev, inputs(commit_events=(commit(150, 25, 2),), tail_live=True), 25)  # auto-commit
    [f] = detect_offset_skips(prev, inputs(commit_events=(commit(100, 30, 3),), tail_live=True), 30, TH)
    assert (f.cause, f.severity, f.magnitude["messages_skipped"]) == (
        "auto_reset_direction_unknown",
        "warning",
        0,
    )


def test_evaluate_reset_latest_from_beyond_truncated_end_skip_and_no_rewind() -> None:
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 100)}), committed=committed(30, {G: 100}))
    findings, _ = evaluate(_truncated(), inp, 30, TH)
    moves = [f for f in findings if f.group == "g" and f.kind in (OFFSET_SKIP, OFFSET_REWIND)]
    assert kinds(tuple(moves)) == [OFFSET_SKIP]


def test_detect_offset_skips_back_to_truncated_end_group_empty_still_direction_unknown() -> None:
    # an operator's --to-latest or a consumer's reset: the same landing either way
    inp = inputs(
        offsets=offsets(30, {(T, 0): (0, 100)}),
        committed=committed(30, {G: 100}),
        groups=groups(30, {"g": "Empty"}),
    )
    [f] = detect_offset_skips(_truncated("Empty"), inp, 30, TH)
    assert (f.cause, f.severity) == ("auto_reset_direction_unknown", "warning")


def test_detect_offset_skips_reset_earliest_from_beyond_truncated_end_not_a_skip() -> None:
    # the same situation reset to the log start stays an offset_rewind (auto_reset_earliest)
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 100)}), committed=committed(30, {G: 0}))
    assert detect_offset_skips(_truncated(), inp, 30, TH) == ()


def test_detect_offset_skips_move_back_below_truncated_end_not_at_log_end_not_a_skip() -> None:
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 100)}), committed=committed(30, {G: 60}))
    assert detect_offset_skips(_truncated(), inp, 30, TH) == ()


def test_detect_offset_skips_reset_past_the_last_observed_log_start_deleted_unread_only_up_to_it() -> None:
    # the tail sees the reset before the range is sampled again; the projected log start may have passed
    # 300, but only 200 was observed: 100 deleted unread (as committed_below_log_start said), not 200
    inp = inputs(commit_events=(commit(300, 25, 1),), groups=groups(25, {"g": "Stable"}), tail_live=True)
    [f] = detect_offset_skips(_fell_below_start(), inp, 25, TH)
    assert f.cause == "auto_reset_earliest"
    assert f.magnitude == {"messages_skipped": 100, "messages_deleted_unread": 100, "messages_read_past": 100}


def _stopped_at_300_then_delete_records(to: int = 700) -> tuple[DetectionState, tuple[Finding, ...]]:
    """A stopped (Empty) group committed 300; delete-records moves the log start to ``to``. The findings of
    the cycle that observes it."""
    s = run(
        DetectionState(),
        inputs(
            offsets=offsets(10, {(T, 0): (0, 1500)}),
            commit_events=(group_event("Empty", 5, 1), commit(300, 5, 2)),
            tail_live=True,
        ),
        10,
    )
    findings, s = evaluate(s, inputs(offsets=offsets(20, {(T, 0): (to, 1500)}), tail_live=True), 20, TH)
    return s, findings


def test_evaluate_forward_skip_over_delete_records_deleted_unread_only_to_log_start_rest_read_past() -> None:
    # Bug: the group restarts with auto.offset.reset=earliest (700), reads on and commits 1000, seen on the
    # tail before the next range sample. committed_below_log_start said 400 lost; the skip said 700 deleted
    # unread and 700 skipped, 300 of which the group had read.
    s, findings = _stopped_at_300_then_delete_records()
    [below] = [f for f in findings if f.kind == COMMITTED_BELOW_LOG_START]
    assert below.magnitude["messages_lost"] == 400
    restart = inputs(
        group_events=(group_event("Stable", 24, 3),), commit_events=(commit(1000, 25, 4),), tail_live=True
    )
    [skip] = [f for f in evaluate(s, restart, 25, TH)[0] if f.kind == OFFSET_SKIP]
    assert (skip.severity, skip.cause) == ("critical", "auto_reset_earliest")
    assert skip.magnitude == {
        "messages_skipped": 400,
        "messages_deleted_unread": 400,
        "messages_read_past": 300,
    }


@pytest.mark.parametrize("members", [True, False], ids=["member-back", "memberless-with-epoch"])
def test_detect_offset_skips_landed_below_log_end_sampled_before_reset_auto_reset_earliest(
    members: bool,
) -> None:
    # the same restart judged with the range observed again (log start still 700): landed past the log
    # start, below 1500, the log end sampled while 300 was still fetchable (before any reset): a reset to
    # latest lands at 1500 or later, so this one was to earliest (was: cause unknown). Committed with a
    # leader epoch while the group had no members, it is a consumer's reset all the same, not "700 never
    # read" by an operator's tool (which commits no epoch)
    s, _ = _stopped_at_300_then_delete_records()
    restart = inputs(
        offsets=offsets(26, {(T, 0): (700, 1500)}),
        group_events=(group_event("Stable", 24, 3),) if members else (),
        commit_events=(commit(1000, 25, 4, leader_epoch=None if members else 0),),
        tail_live=True,
    )
    [skip] = detect_offset_skips(s, restart, 26, TH)
    assert (skip.severity, skip.cause) == ("critical", "auto_reset_earliest")
    assert skip.magnitude == {
        "messages_skipped": 400,
        "messages_deleted_unread": 400,
        "messages_read_past": 300,
    }


def test_evaluate_tail_seen_landing_on_idle_log_end_before_next_sample_direction_unknown() -> None:
    # Found by `offsetguard drill skip`: a stopped group at 300, delete-records to 1000, and no records
    # after it (the log end stays 1500). The restarted group resets to the log end and commits 1500, seen
    # on the tail before the next range sample. The projected range grew the log start by its last step
    # (1000) past the idle log end, and the reset read as one to the log start: auto_reset_earliest with
    # 500 "read past". It landed exactly on the log end last observed, where a reset to the log start
    # that read the 500 kept messages also commits: 700 deleted unread, the 500 skipped or read.
    s, _ = _stopped_at_300_then_delete_records(to=1000)
    restart = inputs(
        group_events=(group_event("Stable", 24, 3),), commit_events=(commit(1500, 25, 4),), tail_live=True
    )
    [skip] = [f for f in evaluate(s, restart, 25, TH)[0] if f.kind == OFFSET_SKIP]
    assert (skip.severity, skip.cause) == ("critical", "auto_reset_direction_unknown")
    assert skip.magnitude == {
        "messages_skipped": 700,
        "messages_deleted_unread": 700,
        "messages_skipped_max": 1200,
        "messages_read_past_max": 500,
    }


def test_detect_offset_skips_stopped_group_past_retention_restarts_at_log_end_critical_loss_and_bounds() -> (
    None
):
    s, _ = _stopped_at_300_then_delete_records()
    restart = inputs(
        offsets=offsets(26, {(T, 0): (700, 1500)}),
        group_events=(group_event("Stable", 24, 3),),
        commit_events=(commit(1500, 25, 4),),
        tail_live=True,
    )
    [skip] = detect_offset_skips(s, restart, 26, TH)
    # was auto_reset_latest, 1200 skipped: the 400 deleted are lost for certain, the 800 kept were
    # skipped (reset to latest) or read (reset to earliest, read to the end before committing)
    assert (skip.severity, skip.cause) == ("critical", "auto_reset_direction_unknown")
    assert skip.magnitude == {
        "messages_skipped": 400,
        "messages_deleted_unread": 400,
        "messages_skipped_max": 1200,
        "messages_read_past_max": 800,
    }


def test_evaluate_retention_passes_stopped_group_reset_earliest_skip_loss_equals_below_log_start() -> None:
    # retention (not an admin): the skip's deleted-unread is the loss committed_below_log_start reported
    s, findings = _stopped_at_300_then_delete_records()
    [below] = [f for f in findings if f.kind == COMMITTED_BELOW_LOG_START]
    restart = inputs(
        group_events=(group_event("Stable", 24, 3),), commit_events=(commit(700, 25, 4),), tail_live=True
    )
    [skip] = [f for f in evaluate(s, restart, 25, TH)[0] if f.kind == OFFSET_SKIP]
    assert (below.cause, skip.cause, skip.severity) == ("retention", "auto_reset_earliest", "critical")
    assert skip.magnitude["messages_deleted_unread"] == below.magnitude["messages_lost"] == 400
    assert (skip.magnitude["messages_skipped"], skip.magnitude["messages_read_past"]) == (400, 0)


def test_detect_offset_skips_admin_reset_of_memberless_group_over_retention_info_nothing_read() -> None:
    s, _ = _stopped_at_300_then_delete_records()
    reset = inputs(
        offsets=offsets(26, {(T, 0): (700, 1500)}), commit_events=(commit(1000, 25, 4),), tail_live=True
    )
    [skip] = detect_offset_skips(s, reset, 26, TH)
    assert (skip.severity, skip.cause) == ("info", "admin_reset")
    assert skip.magnitude == {
        "messages_skipped": 700,
        "messages_deleted_unread": 400,
        "messages_read_past": 0,
    }


def test_detect_offset_skips_forward_from_beyond_truncated_end_all_skipped_none_read_past() -> None:
    # past the log end again (170): not where a reset lands, so no cause; of 150..180 only 150..170 held
    # messages (written since the truncation), and nothing was read from beyond the end
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 170)}), committed=committed(30, {G: 180}))
    [f] = detect_offset_skips(_truncated(), inp, 30, TH)
    assert (f.cause, f.evidence["old_offset_was"]) == ("unknown", "beyond_log_end")
    assert f.magnitude == {"messages_skipped": 20, "messages_deleted_unread": 0, "messages_read_past": 0}


def test_detect_offset_skips_commits_ahead_of_an_empty_log_skip_nothing() -> None:
    # a tool commits 1, 2, 3 ... on a topic nobody has written to: offsets past the log end hold nothing
    s = run(
        DetectionState(),
        inputs(offsets=offsets(10, {(T, 0): (0, 0)}), commit_events=(commit(1, 10, 1),), tail_live=True),
        10,
    )
    s = run(s, inputs(offsets=offsets(11, {(T, 0): (0, 0)}), tail_live=True), 11)
    step = inputs(offsets=offsets(12, {(T, 0): (0, 0)}), commit_events=(commit(2, 12, 2),), tail_live=True)
    assert detect_offset_skips(s, step, 12, TH) == ()


def test_detect_offset_skips_purge_after_the_commit_in_the_same_poll_cycle_nothing() -> None:
    # Kafka Streams: commits 1001 on a repartition topic, then purges it up to 1001, both between two polls
    s = run(
        DetectionState(),
        inputs(offsets=offsets(10, {(T, 0): (900, 1001)}), committed=committed(10, {G: 1000})),
        10,
    )
    inp = inputs(offsets=offsets(14, {(T, 0): (1001, 1001)}), committed=committed(15, {G: 1001}))
    assert detect_offset_skips(s, inp, 15, TH) == ()


def test_detect_offset_skips_landed_on_log_start_that_is_the_log_end_direction_unknown() -> None:
    # retention emptied the log (1500, 1500): the log start is the log end, either reset lands there
    s, _ = _stopped_at_300_then_delete_records(to=1500)
    restart = inputs(
        offsets=offsets(26, {(T, 0): (1500, 1500)}),
        group_events=(group_event("Stable", 24, 3),),
        commit_events=(commit(1500, 25, 4),),
        tail_live=True,
    )
    [skip] = detect_offset_skips(s, restart, 26, TH)
    assert skip.cause == "auto_reset_direction_unknown"
    assert (skip.magnitude["messages_skipped"], skip.magnitude["messages_skipped_max"]) == (1200, 1200)


def test_detect_offset_skips_landed_on_log_start_only_auto_reset_earliest_exact() -> None:
    s, _ = _stopped_at_300_then_delete_records()
    restart = inputs(
        offsets=offsets(26, {(T, 0): (700, 1500)}),
        group_events=(group_event("Stable", 24, 3),),
        commit_events=(commit(700, 25, 4),),
        tail_live=True,
    )
    [skip] = detect_offset_skips(s, restart, 26, TH)
    assert skip.cause == "auto_reset_earliest"
    assert skip.magnitude == {
        "messages_skipped": 400,
        "messages_deleted_unread": 400,
        "messages_read_past": 0,
    }


def _stopped_at_300(state: str = "Empty") -> DetectionState:
    """Group g stopped (``state`` on the tail) at 300 of a log 0..1500: 300 is fetchable."""
    return run(
        DetectionState(),
        inputs(
            offsets=offsets(10, {(T, 0): (0, 1500)}),
            commit_events=(group_event(state, 5, 1), commit(300, 5, 2)),
            tail_live=True,
        ),
        10,
    )


def test_detect_offset_skips_empty_group_reset_forward_to_log_end_admin_reset_info_exact() -> None:
    # kafka-consumer-groups --reset-offsets --to-latest --execute on the stopped group
    reset = inputs(
        offsets=offsets(21, {(T, 0): (0, 1500)}), commit_events=(commit(1500, 20, 3),), tail_live=True
    )
    [f] = detect_offset_skips(_stopped_at_300(), reset, 21, TH)
    assert (f.kind, f.severity, f.cause) == (OFFSET_SKIP, "info", "admin_reset")
    assert f.magnitude == {"messages_skipped": 1200, "messages_deleted_unread": 0, "messages_read_past": 0}
    assert f.evidence["old_offset_was"] == "fetchable"


def test_detect_offset_skips_empty_group_reset_past_log_end_counts_only_existing_messages() -> None:
    # --to-offset 2000 past the log end 1500: offsets 1500..2000 hold nothing
    reset = inputs(
        offsets=offsets(21, {(T, 0): (0, 1500)}), commit_events=(commit(2000, 20, 3),), tail_live=True
    )
    [f] = detect_offset_skips(_stopped_at_300(), reset, 21, TH)
    assert (f.cause, f.magnitude["messages_skipped"]) == ("admin_reset", 1200)


def _polled_empty_after_members_committed(commit_at: float) -> tuple[DetectionState, CycleInputs]:
    """A member (on the tail: Stable) committed 300; a poll at 12 shows the group Empty; the tail, a batch
    behind the poll, then brings a commit of 1500 made at ``commit_at`` and the group's Empty record."""
    s = run(_stopped_at_300("Stable"), inputs(groups=groups(12, {"g": "Empty"}), tail_live=True), 12)
    step = inputs(
        offsets=offsets(21, {(T, 0): (0, 1500)}),
        commit_events=(commit(1500, commit_at, 3), group_event("Empty", commit_at + 0.5, 4)),
        tail_live=True,
    )
    return s, step


def test_detect_offset_skips_commit_made_before_the_poll_that_saw_the_group_empty_nothing() -> None:
    # the member's own last commit, then its leave: the poll saw the group after both (CI: kafka-python
    # after an unclean election, "100 never read (admin_reset)"; it had read them)
    s, step = _polled_empty_after_members_committed(11.0)
    assert detect_offset_skips(s, step, 21, TH) == ()


def test_detect_offset_skips_commit_made_after_the_poll_that_saw_the_group_empty_admin_reset() -> None:
    s, step = _polled_empty_after_members_committed(15.0)
    [f] = detect_offset_skips(s, step, 21, TH)
    assert (f.severity, f.cause, f.magnitude["messages_skipped"]) == ("info", "admin_reset", 1200)


def test_detect_offset_skips_commit_just_after_the_poll_that_saw_the_group_empty_bounded() -> None:
    # the poll saw the group memberless 0.5 s before the commit: its member may have left just before
    s, step = _polled_empty_after_members_committed(12.5)
    [f] = detect_offset_skips(s, step, 21, TH)
    assert (f.severity, f.cause) == ("info", "member_left_or_admin_reset")
    assert f.magnitude == {"messages_skipped": 0, "messages_skipped_max": 1200, "messages_deleted_unread": 0}
    assert f.evidence["left_before_commit_seconds"] == 0.5


@pytest.mark.parametrize(
    ("after", "cause"),
    [(0.0, "member_left_or_admin_reset"), (0.9, "member_left_or_admin_reset"), (1.5, "admin_reset")],
)
def test_detect_offset_skips_forward_commit_after_the_groups_empty_record(after: float, cause: str) -> None:
    # the group's Empty record at 5; a commit ``after`` seconds later: within 1 s the departing member's
    # own commit after its leave (KIP-848 Java consumer, truth matrix) fits as well as an operator's
    reset = inputs(
        offsets=offsets(21, {(T, 0): (0, 1500)}), commit_events=(commit(1500, 5 + after, 3),), tail_live=True
    )
    [f] = detect_offset_skips(_stopped_at_300(), reset, 21, TH)
    assert (f.severity, f.cause) == ("info", cause)
    skipped = 0 if cause != "admin_reset" else 1200
    assert (f.magnitude["messages_skipped"], f.magnitude.get("messages_skipped_max", 1200)) == (skipped, 1200)


def test_detect_offset_skips_forward_commit_with_a_leader_epoch_long_after_the_empty_record_nothing() -> None:
    # a consumer's commit (Kafka's reset tool commits no leader epoch): librdkafka's close commit reached
    # the coordinator 2.4 s after its LeaveGroup on a loaded machine (CI: "8 never read (admin_reset)"; it
    # had read them)
    for after in (0.5, 2.4, 60.0):
        reset = inputs(
            offsets=offsets(80, {(T, 0): (0, 1500)}),
            commit_events=(commit(1500, 5 + after, 3, leader_epoch=1),),
            tail_live=True,
        )
        assert detect_offset_skips(_stopped_at_300(), reset, 80, TH) == ()


def test_detect_offset_skips_empty_group_forward_over_nothing_no_finding() -> None:
    s = run(
        DetectionState(),
        inputs(
            offsets=offsets(10, {(T, 0): (0, 300)}),
            commit_events=(group_event("Empty", 5, 1), commit(300, 5, 2)),
            tail_live=True,
        ),
        10,
    )
    reset = inputs(
        offsets=offsets(21, {(T, 0): (0, 300)}), commit_events=(commit(400, 20, 3),), tail_live=True
    )
    assert detect_offset_skips(s, reset, 21, TH) == ()


def test_detect_offset_skips_forward_move_of_group_with_members_nothing() -> None:
    step = inputs(
        offsets=offsets(21, {(T, 0): (0, 1500)}), commit_events=(commit(1500, 20, 3),), tail_live=True
    )
    assert detect_offset_skips(_stopped_at_300("Stable"), step, 21, TH) == ()


def test_detect_offset_skips_standalone_group_forward_move_nothing() -> None:
    # an assign() consumer's group: no group records, never members; its commits are its progress
    s = run(
        DetectionState(),
        inputs(offsets=offsets(10, {(T, 0): (0, 1500)}), commit_events=(commit(300, 5, 1),), tail_live=True),
        10,
    )
    step = inputs(
        offsets=offsets(21, {(T, 0): (0, 1500)}), commit_events=(commit(1500, 20, 2),), tail_live=True
    )
    assert detect_offset_skips(s, step, 21, TH) == ()


def test_detect_offset_skips_polled_standalone_group_forward_move_nothing() -> None:
    s = run(
        DetectionState(),
        inputs(
            offsets=offsets(10, {(T, 0): (0, 1500)}),
            committed=committed(10, {G: 300}),
            groups=_epoch_groups(10, "Empty", 3, protocol_type=""),
        ),
        10,
    )
    step = inputs(
        offsets=offsets(20, {(T, 0): (0, 1500)}),
        committed=committed(20, {G: 1500}),
        groups=_epoch_groups(20, "Empty", 3, protocol_type=""),
    )
    assert detect_offset_skips(s, step, 20, TH) == ()


def _epoch_groups(
    at: float, state: str, epoch: int | None, protocol_type: str = "consumer"
) -> GroupsObservation:
    return GroupsObservation(
        C, at, (GroupInfo("g", "consumer", state, protocol_type, "", (), group_epoch=epoch),)
    )


def _polled_empty(epochs: tuple[int | None, int | None]) -> tuple[DetectionState, CycleInputs]:
    s = run(
        DetectionState(),
        inputs(
            offsets=offsets(10, {(T, 0): (0, 1500)}),
            committed=committed(10, {G: 300}),
            groups=_epoch_groups(10, "Empty", epochs[0]),
        ),
        10,
    )
    step = inputs(
        offsets=offsets(20, {(T, 0): (0, 1500)}),
        committed=committed(20, {G: 1500}),
        groups=_epoch_groups(20, "Empty", epochs[1]),
    )
    return s, step


def test_detect_offset_skips_polled_empty_group_same_epoch_forward_admin_reset() -> None:
    s, step = _polled_empty((4, 4))
    [f] = detect_offset_skips(s, step, 20, TH)
    assert (f.severity, f.cause, f.magnitude["messages_skipped"]) == ("info", "admin_reset", 1200)


def test_detect_offset_skips_polled_empty_group_epoch_moved_or_unknown_nothing() -> None:
    # members joined, read and left between the polls (the epoch moved), or a classic group's poll, which
    # has no epoch: its own progress cannot be told from an operator's reset
    for epochs in ((4, 6), (None, None)):
        s, step = _polled_empty(epochs)
        assert detect_offset_skips(s, step, 20, TH) == (), epochs


def test_detect_offset_skips_kip848_epoch_record_after_polled_empty_members_commit_nothing() -> None:
    # polled Empty; the tail then shows the group epoch move (members joined) and a member's commits
    s = run(
        DetectionState(),
        inputs(
            offsets=offsets(10, {(T, 0): (0, 1500)}),
            committed=committed(10, {G: 300}),
            groups=_epoch_groups(10, "Empty", 4),
            tail_live=True,
        ),
        10,
    )
    step = inputs(
        offsets=offsets(21, {(T, 0): (0, 1500)}),
        group_events=(GroupEvent(C, "g", None, 5, "consumer", 15_000, 0, 1),),
        commit_events=(commit(800, 16, 2), commit(1500, 20, 3)),
        tail_live=True,
    )
    assert detect_offset_skips(s, step, 21, TH) == ()


def test_detect_offset_skips_empty_group_forward_without_any_log_range_nothing() -> None:
    s = run(
        DetectionState(),
        inputs(commit_events=(group_event("Empty", 5, 1), commit(300, 5, 2)), tail_live=True),
        10,
    )
    reset = inputs(commit_events=(commit(1500, 20, 3),), tail_live=True)
    assert detect_offset_skips(s, reset, 21, TH) == ()


def test_detect_offset_skips_back_past_truncated_end_below_log_end_direction_unknown_bounds() -> None:
    # 110: past the truncated end 100, below the log end 120: either reset, then read on to 110
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 120)}), committed=committed(30, {G: 110}))
    [f] = detect_offset_skips(_truncated(), inp, 30, TH)
    assert (f.cause, f.severity) == ("auto_reset_direction_unknown", "warning")
    assert (f.magnitude["messages_skipped"], f.magnitude["messages_skipped_max"]) == (0, 10)
    assert f.magnitude["messages_replayed_max"] == 100


def test_detect_offset_skips_empty_group_reset_past_last_sampled_log_end_certain_part_and_bound() -> None:
    # seen on the tail before the range is observed again: the log end may have grown past 1500 by then
    reset = inputs(commit_events=(commit(1800, 20, 3),), tail_live=True)
    [f] = detect_offset_skips(_stopped_at_300(), reset, 20, TH)
    assert (f.cause, f.severity) == ("admin_reset", "info")
    assert (f.magnitude["messages_skipped"], f.magnitude["messages_skipped_max"]) == (1200, 1500)


def test_detect_offset_skips_forward_from_beyond_landing_within_log_nothing_certain_warning() -> None:
    # truncated to 100 under 150, then 60 written (log end 160): a stopped group restarting at 150 fetches
    # there and reads on to 160 (skipping the 100..150 written below it), or reset and read on: unknown
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 160)}), committed=committed(30, {G: 160}))
    [f] = detect_offset_skips(_truncated(), inp, 30, TH)
    assert (f.cause, f.severity, f.evidence["old_offset_was"]) == ("unknown", "warning", "beyond_log_end")
    assert f.magnitude == {"messages_deleted_unread": 0, "messages_skipped": 0, "messages_skipped_max": 60}
