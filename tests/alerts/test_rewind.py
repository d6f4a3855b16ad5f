from alerts.model import OFFSET_REWIND
from alerts.rewind import detect_offset_rewinds, rewind_outcomes
from alerts.state import DetectionState
from tests.alerts.builders import (
    TH,
    T,
    commit,
    committed,
    group_event,
    groups,
    inputs,
    metadata,
    offsets,
    run,
)

G = ("g", T, 0)


def _polled(
    states: tuple[str, str] = ("Stable", "Stable"), protocol_type: str = "consumer"
) -> DetectionState:
    s = run(
        DetectionState(),
        inputs(
            offsets=offsets(10, {(T, 0): (0, 1000)}),
            committed=committed(10, {G: 500}),
            groups=groups(10, {"g": states[0]}, protocol_type),
        ),
        10,
    )
    return s


def test_detect_offset_rewinds_polled_commit_moved_back_critical_with_replayed_count() -> None:
    prev = _polled()
    inp = inputs(
        offsets=offsets(20, {(T, 0): (0, 1000)}),
        committed=committed(20, {G: 300}),
        groups=groups(20, {"g": "Stable"}),
    )
    [f] = detect_offset_rewinds(prev, inp, 20, TH)
    assert (f.kind, f.severity, f.cause, f.group, f.partition) == (
        OFFSET_REWIND,
        "critical",
        "unknown",
        "g",
        0,
    )
    assert f.magnitude["messages_replayed"] == 200
    assert (f.evidence["old_offset"], f.evidence["new_offset"]) == (500, 300)


def test_detect_offset_rewinds_group_empty_both_ends_admin_reset_info() -> None:
    prev = _polled(("Empty", "Empty"))
    inp = inputs(
        offsets=offsets(20, {(T, 0): (0, 1000)}),
        committed=committed(20, {G: 100}),
        groups=groups(20, {"g": "Empty"}),
    )
    [f] = detect_offset_rewinds(prev, inp, 20, TH)
    assert (f.severity, f.cause) == ("info", "admin_reset")


def test_detect_offset_rewinds_standalone_group_empty_not_called_admin_stays_critical() -> None:
    prev = _polled(("Empty", "Empty"), protocol_type="")
    inp = inputs(
        offsets=offsets(20, {(T, 0): (0, 1000)}),
        committed=committed(20, {G: 100}),
        groups=groups(20, {"g": "Empty"}, protocol_type=""),
    )
    [f] = detect_offset_rewinds(prev, inp, 20, TH)
    assert (f.severity, f.cause) == ("critical", "unknown")


def _truncated() -> DetectionState:
    s = run(
        DetectionState(),
        inputs(offsets=offsets(10, {(T, 0): (0, 150)}), committed=committed(10, {G: 150})),
        10,
    )
    return run(s, inputs(offsets=offsets(20, {(T, 0): (0, 100)}), committed=committed(20, {G: 150})), 20)


def test_detect_offset_rewinds_old_beyond_truncated_end_new_at_log_start_replays_only_kept_messages() -> None:
    # 150 committed, truncated to 100, reset to 0: the 100 kept are re-read, not 150 (was 150: offsets
    # 100..150 held messages the truncation destroyed; new ones written there were never read before)
    prev = _truncated()
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 100)}), committed=committed(30, {G: 0}))
    [f] = detect_offset_rewinds(prev, inp, 30, TH)
    assert (f.cause, f.severity, f.magnitude["messages_replayed"]) == ("auto_reset_earliest", "critical", 100)
    assert f.evidence["log_end_after_truncation"] == 100


def test_detect_offset_rewinds_reset_to_log_start_after_truncation_and_produce_counts_min_old_end() -> None:
    # 30 produced since the truncation (log end 130): still only the 100 kept below the truncated end
    prev = _truncated()
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 130)}), committed=committed(30, {G: 0}))
    [f] = detect_offset_rewinds(prev, inp, 30, TH)
    assert (f.cause, f.magnitude["messages_replayed"]) == ("auto_reset_earliest", 100)
    assert (f.evidence["old_offset"], f.evidence["new_offset"], f.evidence["log_end_after_truncation"]) == (
        150,
        0,
        100,
    )


def test_detect_offset_rewinds_old_beyond_truncated_end_new_at_log_end_not_a_rewind() -> None:
    # auto.offset.reset=latest from beyond the truncated log end: nothing re-read, an offset_skip instead
    prev = _truncated()
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 100)}), committed=committed(30, {G: 100}))
    assert detect_offset_rewinds(prev, inp, 30, TH) == ()
    findings, pending = rewind_outcomes(prev, inp, 30, TH)
    assert (findings, pending) == ((), ())


def test_detect_offset_rewinds_old_beyond_truncated_end_new_at_grown_log_end_not_a_rewind() -> None:
    prev = _truncated()
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 120)}), committed=committed(30, {G: 120}))
    assert detect_offset_rewinds(prev, inp, 30, TH) == ()


def test_detect_offset_rewinds_old_beyond_truncated_end_new_below_it_auto_reset_earliest_min_old_end() -> (
    None
):
    # 60 is below the truncated end 100, where no reset to latest lands: a reset to the log start, read
    # on to 60 before the commit (was: cause unknown, 90 re-read, counting the destroyed 100..150)
    prev = _truncated()
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 100)}), committed=committed(30, {G: 60}))
    [f] = detect_offset_rewinds(prev, inp, 30, TH)
    assert (f.kind, f.cause, f.magnitude["messages_replayed"]) == (OFFSET_REWIND, "auto_reset_earliest", 40)


def test_detect_offset_rewinds_back_past_truncated_end_not_at_log_end_not_a_rewind() -> None:
    # 110 is past the truncated end 100 (log end 120 now): a reset to latest that read on, or one to
    # earliest that read on; an offset_skip with bounds (alerts.skip), not a rewind of 40
    prev = _truncated()
    inp = inputs(offsets=offsets(30, {(T, 0): (0, 120)}), committed=committed(30, {G: 110}))
    assert detect_offset_rewinds(prev, inp, 30, TH) == ()


def test_detect_offset_rewinds_older_generation_commit_rebalance_recommit() -> None:
    events = (commit(500, 1, 1, generation=5), commit(300, 2, 2, generation=4))
    [f] = detect_offset_rewinds(DetectionState(), inputs(commit_events=events, tail_live=True), 3, TH)
    assert (f.cause, f.severity, f.magnitude["messages_replayed"]) == ("rebalance_recommit", "critical", 200)


def test_detect_offset_rewinds_older_member_epoch_commit_rebalance_recommit() -> None:
    events = (commit(500, 1, 1, member_epoch=9), commit(300, 2, 2, member_epoch=7))
    [f] = detect_offset_rewinds(DetectionState(), inputs(commit_events=events, tail_live=True), 3, TH)
    assert f.cause == "rebalance_recommit"


def test_detect_offset_rewinds_undone_in_same_batch_rebalance_recommit_with_undo_evidence() -> None:
    events = (commit(500, 1, 1), commit(300, 2, 2), commit(520, 5, 3))
    [f] = detect_offset_rewinds(DetectionState(), inputs(commit_events=events, tail_live=True), 6, TH)
    assert f.cause == "rebalance_recommit"
    assert (f.evidence["undone_by_offset"], f.evidence["undone_at"]) == (520, 5.0)


def test_rewind_outcomes_no_cause_inside_window_reported_unknown_at_once_and_held() -> None:
    events = (commit(500, 1, 1), commit(300, 2, 2))
    findings, pending = rewind_outcomes(
        DetectionState(), inputs(commit_events=events, tail_live=True), 2.1, TH
    )
    assert [(f.cause, f.severity, f.magnitude["messages_replayed"]) for f in findings] == [
        ("unknown", "critical", 200)
    ]
    assert [(p.old.offset, p.new.offset) for p in pending] == [(500, 300)]


def test_detect_offset_rewinds_pending_window_passes_dropped_without_second_report() -> None:
    s = run(
        DetectionState(), inputs(commit_events=(commit(500, 1, 1), commit(300, 2, 2)), tail_live=True), 10
    )
    later = 2 + TH.recommit_window_seconds
    assert detect_offset_rewinds(s, inputs(tail_live=True), later, TH) == ()
    assert run(s, inputs(tail_live=True), later).pending_rewinds == ()


def test_detect_offset_rewinds_pending_undone_next_batch_reclassified_same_fingerprint() -> None:
    events = (commit(500, 1, 1), commit(300, 2, 2))
    [first] = detect_offset_rewinds(DetectionState(), inputs(commit_events=events, tail_live=True), 3, TH)
    s = run(DetectionState(), inputs(commit_events=events, tail_live=True), 3)
    [f] = detect_offset_rewinds(s, inputs(commit_events=(commit(510, 12, 3),), tail_live=True), 13, TH)
    assert (f.cause, f.fingerprint) == ("rebalance_recommit", first.fingerprint)
    assert (f.evidence["old_offset"], f.evidence["new_offset"], f.evidence["undone_by_offset"]) == (
        500,
        300,
        510,
    )


def test_detect_offset_rewinds_undone_after_window_not_reclassified() -> None:
    s = run(DetectionState(), inputs(commit_events=(commit(500, 1, 1), commit(300, 2, 2)), tail_live=True), 3)
    late = 3 + TH.recommit_window_seconds
    undo = inputs(commit_events=(commit(510, late, 3),), tail_live=True)
    assert detect_offset_rewinds(s, undo, late, TH) == ()


def test_detect_offset_rewinds_redelivered_tail_records_ignored() -> None:
    events = (commit(500, 1, 1), commit(600, 2, 2))
    s = run(DetectionState(), inputs(commit_events=events, tail_live=True), 3)
    assert detect_offset_rewinds(s, inputs(commit_events=events, tail_live=True), 100, TH) == ()


def test_detect_offset_rewinds_forward_moves_nothing() -> None:
    events = tuple(commit(o, i, i) for i, o in enumerate((10, 20, 20, 35, 90), start=1))
    assert (
        detect_offset_rewinds(DetectionState(), inputs(commit_events=events, tail_live=True), 100, TH) == ()
    )


def test_detect_offset_rewinds_tail_record_older_than_poll_seed_ignored() -> None:
    s = run(DetectionState(), inputs(committed=committed(50, {G: 500}), tail_live=True), 50)
    late = inputs(commit_events=(commit(300, 40, 7),), tail_live=True)
    assert detect_offset_rewinds(s, late, 60, TH) == ()


def test_detect_offset_rewinds_recommitted_after_truncation_seen_still_auto_reset_earliest() -> None:
    # 150 committed at 10; the log end falls to 100 (seen at 20); an auto-commit re-commits 150 at 25;
    # the consumer then resets to the log start.
    prev = run(
        DetectionState(),
        inputs(offsets=offsets(10, {(T, 0): (0, 150)}), commit_events=(commit(150, 10, 1),), tail_live=True),
        10,
    )
    prev = run(prev, inputs(offsets=offsets(20, {(T, 0): (0, 100)}), tail_live=True), 20)
    prev = run(prev, inputs(commit_events=(commit(150, 25, 2),), tail_live=True), 25)
    inp = inputs(commit_events=(commit(0, 30, 3),), tail_live=True)
    [f] = detect_offset_rewinds(prev, inp, 30, TH)
    assert (f.cause, f.magnitude["messages_replayed"]) == ("auto_reset_earliest", 100)


def test_detect_offset_rewinds_membership_at_each_commit_from_tail_group_records() -> None:
    from tests.alerts.builders import group_event

    s = run(
        DetectionState(),
        inputs(commit_events=(group_event("Stable", 1, 1), commit(500, 2, 2)), tail_live=True),
        2,
    )
    events = (
        group_event("Empty", 3, 3),  # the members left: only an operator's tool commits now
        commit(100, 4, 4),
        group_event("Stable", 5, 5, generation=2),  # members again
        commit(10, 6, 6),
    )
    found = detect_offset_rewinds(
        s, inputs(commit_events=events[1::2], group_events=events[::2], tail_live=True), 6, TH
    )
    assert [(f.evidence["new_offset"], f.severity, f.cause) for f in found] == [
        (100, "info", "admin_reset"),
        (10, "critical", "unknown"),
    ]


def test_detect_offset_rewinds_memberless_commit_with_a_leader_epoch_a_consumers_not_admin() -> None:
    # the group had no members, but the commit carries a leader epoch: a consumer committed it (a departing
    # member's late last commit, an assign() reader), never kafka-consumer-groups, which commits none
    s = run(
        DetectionState(),
        inputs(commit_events=(group_event("Stable", 1, 1), commit(500, 2, 2)), tail_live=True),
        2,
    )
    events = (group_event("Empty", 3, 3), commit(100, 4, 4, leader_epoch=0))
    [f] = detect_offset_rewinds(
        s, inputs(commit_events=events[1:], group_events=events[:1], tail_live=True), 6, TH
    )
    assert (f.severity, f.cause, f.magnitude["messages_replayed"]) == ("critical", "unknown", 400)


def test_detect_offset_rewinds_back_from_a_recommit_right_after_the_offset_vanished_bounded_warning() -> None:
    # The truth matrix's topic deleted under a running aiokafka consumer: the deletion tombstones the
    # group's 50; the consumer re-commits its position 50 (now on the re-created topic), then resets to 0.
    # Nothing was re-read; were the old messages still there, 50 would be: at most 50, nothing certain.
    s = _consuming(50)
    events = (commit(None, 2.2, 2), commit(50, 2.3, 3), commit(0, 2.9, 4))
    [f] = detect_offset_rewinds(s, inputs(commit_events=events, tail_live=True), 3, TH)
    assert (f.kind, f.severity, f.cause) == (OFFSET_REWIND, "warning", "after_offsets_removed")
    assert f.magnitude == {"messages_replayed": 0, "messages_replayed_max": 50}
    assert f.evidence["offset_vanished_at"] == 2.2


def test_detect_offset_rewinds_commit_long_after_the_offset_vanished_still_critical() -> None:
    s = run(
        DetectionState(),
        inputs(offsets=offsets(1, {(T, 0): (0, 500)}), commit_events=(commit(50, 0.5, 1),), tail_live=True),
        1,
    )
    events = (commit(None, 2.2, 2), commit(300, 100, 3), commit(100, 101, 4))
    [f] = detect_offset_rewinds(s, inputs(commit_events=events, tail_live=True), 101, TH)
    assert (f.severity, f.magnitude["messages_replayed"]) == ("critical", 200)


def _consuming(log_end: int, state: str = "Stable") -> DetectionState:
    """The group at 50 on T[0]; with ``state`` Stable a member is assigned T[0] (it consumes the topic)."""
    assigned = {"g": ((T, 0),)} if state == "Stable" else None
    return run(
        DetectionState(),
        inputs(
            offsets=offsets(1, {(T, 0): (0, log_end)}),
            groups=groups(1, {"g": state}, assigned=assigned),
            commit_events=(commit(50, 0.5, 1),),
            tail_live=True,
        ),
        1,
    )


def test_detect_offset_rewinds_recommit_after_an_idle_groups_offset_vanished_rewind_as_ever() -> None:
    # An Empty group's offset expires or is deleted by an operator (no member consumes the topic): that is
    # no topic deletion, and a move back after a re-commit is a rewind as ever (here an operator's).
    s = _consuming(500, state="Empty")
    events = (commit(None, 2.2, 2), commit(300, 2.3, 3), commit(100, 2.9, 4))
    [f] = detect_offset_rewinds(s, inputs(commit_events=events, tail_live=True), 3, TH)
    assert (f.cause, f.magnitude["messages_replayed"]) == ("admin_reset", 200)


def _on_topic_a() -> DetectionState:
    """The group at 50 on T[0] (a member subscribed to T), T listed under topic id A with log 0-50."""
    events = (group_event("Stable", 100, 1, topics=(T,)), commit(50, 100, 2))
    s = run(DetectionState(), inputs(commit_events=events, tail_live=True), 100)
    meta = metadata(100, {(T, 0): (1, 0, (1,))}, topic_id="A")
    return run(s, inputs(metadata=meta, offsets=offsets(100, {(T, 0): (0, 50)})), 100)


def _recommitted_then_seen_recreated(**polled: object) -> DetectionState:
    """Matrix (aiokafka, auto-create on, under load): the deletion's tombstone told in one cycle; the
    consumer re-creates the topic and re-commits its position 50 (past the new, empty log's end) just
    before the metadata poll lists T under the new id B."""
    s = run(_on_topic_a(), inputs(commit_events=(commit(None, 130, 3),), tail_live=True), 130)
    meta = metadata(132, {(T, 0): (1, 0, (1,))}, topic_id="B")
    inp = inputs(commit_events=(commit(50, 131, 4),), tail_live=True, metadata=meta, **polled)
    return run(s, inp, 132)


def test_detect_offset_rewinds_recommit_before_topic_seen_recreated_then_reset_bounded_warning() -> None:
    # Bug: the reset 50 -> 0 on the new topic, a cycle after the tombstone, was measured against the
    # deleted topic's range and paged a critical replay of 50; nothing was read twice
    s = _recommitted_then_seen_recreated()
    [f] = detect_offset_rewinds(s, inputs(commit_events=(commit(0, 139, 5),), tail_live=True), 140, TH)
    assert (f.kind, f.severity, f.cause) == (OFFSET_REWIND, "warning", "after_offsets_removed")
    assert f.magnitude == {"messages_replayed": 0, "messages_replayed_max": 50}
    assert f.evidence["topic_gone_at"] == 132


def test_detect_offset_rewinds_recommit_past_new_topics_end_then_reset_not_auto_reset_earliest() -> None:
    # the new topic's range polled with the re-creation (0-10): its end is no truncation under the move
    # (critical auto_reset_earliest, 10 re-read, before): the consumer never read the new topic's 0-10
    s = _recommitted_then_seen_recreated(offsets=offsets(132, {(T, 0): (0, 10)}))
    [f] = detect_offset_rewinds(s, inputs(commit_events=(commit(0, 139, 5),), tail_live=True), 140, TH)
    assert (f.severity, f.cause, f.magnitude["messages_replayed"]) == ("warning", "after_offsets_removed", 0)


def test_detect_offset_rewinds_on_the_recreated_topic_after_it_was_seen_still_critical() -> None:
    # a rewind made on the new topic long after it was seen is one: it pages with its magnitude
    s = _recommitted_then_seen_recreated(offsets=offsets(132, {(T, 0): (0, 500)}))
    s = run(
        s,
        inputs(
            commit_events=(commit(400, 200, 5),), tail_live=True, offsets=offsets(200, {(T, 0): (0, 500)})
        ),
        200,
    )
    [f] = detect_offset_rewinds(s, inputs(commit_events=(commit(100, 210, 6),), tail_live=True), 210, TH)
    assert (f.severity, f.cause, f.magnitude["messages_replayed"]) == ("critical", "unknown", 300)


def test_detect_offset_rewinds_on_the_deleted_topic_before_it_went_still_critical() -> None:
    # both commits before the topic was seen gone (told in the same cycle): a rewind on the old topic
    meta = metadata(132, {(T, 0): (1, 0, (1,))}, topic_id="B")
    inp = inputs(commit_events=(commit(10, 110, 3),), tail_live=True, metadata=meta)
    [f] = detect_offset_rewinds(_on_topic_a(), inp, 132, TH)
    assert (f.severity, f.magnitude["messages_replayed"]) == ("critical", 40)
