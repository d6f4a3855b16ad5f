from dataclasses import replace

import pytest

from alerts.lost import detect_offsets_lost, loss_outcomes
from alerts.model import OFFSETS_LOST
from alerts.state import CommitKey, DetectionState
from collectors.model import Failure, OffsetsObservation
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

DAY = 86400.0
RETENTION = 7 * DAY


def _ranges(at: float) -> OffsetsObservation:
    """A log-range observation of t[0] and t[1] at ``at``: the topic exists then."""
    return offsets(at, {(T, 0): (0, 1000), (T, 1): (0, 1000)})


def _tailed(state: str, at: float = 100) -> DetectionState:
    events = (group_event(state, at, 1), commit(40, at, 2), commit(70, at, 3, partition=1))
    return run(DetectionState(), inputs(commit_events=events, tail_live=True), at)


def _polled_stable() -> DetectionState:
    """Group g, Stable, seen by polls only (no tail) with an offset on t[0] at 10."""
    inp = inputs(committed=committed(10, {("g", T, 0): 5}), groups=groups(10, {"g": "Stable"}))
    return run(DetectionState(), inp, 10)


def test_detect_offsets_lost_tombstone_while_group_stable_critical_per_partition() -> None:
    s = _tailed("Stable")
    inp = inputs(offsets=_ranges(200), commit_events=(commit(None, 200, 4),), tail_live=True)
    [f] = detect_offsets_lost(s, inp, 200, TH)
    assert (f.kind, f.severity, f.partition, f.cause) == (
        OFFSETS_LOST,
        "critical",
        0,
        "deleted_while_consuming",
    )
    assert f.magnitude["offset"] == 40


def test_detect_offsets_lost_tombstone_soon_after_last_commit_of_empty_group_info_not_critical() -> None:
    # Empty: nobody consumes, whoever committed 50 s ago (a tool, or a member that has left since)
    s = _tailed("Empty")
    inp = inputs(offsets=_ranges(150), commit_events=(commit(None, 150, 4),), tail_live=True)
    [f] = detect_offsets_lost(s, inp, 150, TH)
    assert (f.severity, f.cause, f.partition) == ("info", "admin_offset_delete", None)


def test_detect_offsets_lost_idle_group_all_expired_info_group_level() -> None:
    s = _tailed("Empty")
    later = 100 + RETENTION + 60
    tombs = (commit(None, later, 4), commit(None, later, 5, partition=1))
    inp = inputs(offsets=_ranges(later), commit_events=tombs, tail_live=True)
    [f] = detect_offsets_lost(s, inp, later, TH)
    assert (f.severity, f.partition, f.cause, f.magnitude["offsets_lost"]) == ("info", None, "expired", 2)
    assert f.evidence["offsets"] == ("t[0]=40", "t[1]=70")


def test_detect_offsets_lost_delete_groups_of_idle_group_info_group_deleted() -> None:
    s = _tailed("Empty")
    at = 100 + DAY
    events = (commit(None, at, 4), commit(None, at, 5, partition=1), group_event("Dead", at, 6))
    [f] = detect_offsets_lost(s, inputs(offsets=_ranges(at), commit_events=events, tail_live=True), at, TH)
    assert (f.severity, f.cause, f.partition, f.magnitude["offsets_lost"]) == (
        "info",
        "group_deleted",
        None,
        2,
    )


def test_detect_offsets_lost_delete_groups_of_kip848_group_last_polled_stable_info_group_deleted() -> None:
    """The members of a KIP-848 group leave by member records (no group state in the tail): the last state
    known is the poll's Stable when DeleteGroups, which the coordinator allows only for an empty group,
    writes the offsets' tombstones and the group's."""
    s = run(
        DetectionState(),
        inputs(
            commit_events=(commit(40, 100, 2), commit(70, 100, 3, partition=1)),
            groups=groups(100, {"g": "Stable"}),
            tail_live=True,
        ),
        100,
    )
    at = 101.0  # a second after the last commit: "committed recently" does not make it consuming
    events = (commit(None, at, 4), commit(None, at, 5, partition=1), group_event("Dead", at, 6))
    [f] = detect_offsets_lost(s, inputs(offsets=_ranges(at), commit_events=events, tail_live=True), at, TH)
    assert (f.severity, f.cause, f.partition, f.magnitude["offsets_lost"]) == (
        "info",
        "group_deleted",
        None,
        2,
    )


def test_detect_offsets_lost_all_gone_empty_group_not_deleted_info_admin_offset_delete() -> None:
    s = _tailed("Empty")
    at = 100 + DAY
    events = (commit(None, at, 4), commit(None, at, 5, partition=1))
    [f] = detect_offsets_lost(s, inputs(offsets=_ranges(at), commit_events=events, tail_live=True), at, TH)
    assert (f.severity, f.cause) == ("info", "admin_offset_delete")


def test_detect_offsets_lost_part_of_idle_group_offset_delete_info_group_level() -> None:
    s = _tailed("Empty")
    at = 100 + DAY
    inp = inputs(offsets=_ranges(at), commit_events=(commit(None, at, 4),), tail_live=True)
    [f] = detect_offsets_lost(s, inp, at, TH)
    assert (f.severity, f.cause, f.topic, f.partition) == ("info", "admin_offset_delete", None, None)
    assert f.evidence["offsets"] == ("t[0]=40",)


def test_detect_offsets_lost_polled_offsets_vanish_while_stable_critical() -> None:
    s = _polled_stable()
    inp = inputs(
        offsets=_ranges(20), committed=committed(20, {}, groups=("g",)), groups=groups(20, {"g": "Stable"})
    )
    [f] = detect_offsets_lost(s, inp, 20, TH)
    assert (f.severity, f.evidence["source"]) == ("critical", "poll")


def test_detect_offsets_lost_poll_taken_before_a_tail_commit_it_lacks_nothing() -> None:
    # the tail (not live: a gap) delivers a commit at 21 before a poll taken at 20 is evaluated, which
    # lists none of the group's offsets: it was taken before the commit, not after a deletion (soak)
    s = _polled_stable()
    inp = inputs(
        offsets=_ranges(22),
        committed=committed(20, {}, groups=("g",)),
        groups=groups(20, {"g": "Stable"}),
        commit_events=(commit(60, 21, 1),),
    )
    assert detect_offsets_lost(s, inp, 22, TH) == ()


def test_detect_offsets_lost_topic_hidden_by_an_acl_is_not_a_loss() -> None:
    """DESCRIBE on the topic taken away: OffsetFetch leaves its offsets out, the collector says so with a
    ``topic`` failure, and nothing is lost (the same vanishing offsets page critical otherwise, above)."""
    s = _polled_stable()
    hidden = Failure("topic", T, "KafkaAuthError", "committed offsets not seen: not authorized")
    poll = replace(committed(20, {}, groups=("g",)), failures=(hidden,))
    inp = inputs(offsets=_ranges(20), committed=poll, groups=groups(20, {"g": "Stable"}))
    assert detect_offsets_lost(s, inp, 20, TH) == ()
    after = run(s, inp, 20)
    assert CommitKey("g", T, 0) in after.commits  # still known, at its last value


def test_detect_offsets_lost_group_not_fetched_this_cycle_nothing() -> None:
    s = _polled_stable()
    inp = inputs(committed=committed(20, {("h", T, 0): 1}), groups=groups(20, {"g": "Stable"}))
    assert detect_offsets_lost(s, inp, 20, TH) == ()


def test_detect_offsets_lost_topic_deleted_under_stable_group_info_topic_deleted() -> None:
    s = _tailed("Stable")
    inp = inputs(
        metadata=metadata(200, {("other", 0): (1, 0, (1,))}),
        commit_events=(commit(None, 200, 4),),
        tail_live=True,
    )
    [f] = detect_offsets_lost(s, inp, 200, TH)
    assert (f.severity, f.cause, f.partition) == ("info", "topic_deleted", None)


def test_detect_offsets_lost_expiry_judged_by_retention_observed_in_an_earlier_cycle() -> None:
    from collectors.model import ConfigsObservation

    minute = ConfigsObservation("c", 100, (), broker=(("offsets.retention.minutes", "1"),))
    events = (group_event("Empty", 100, 1), commit(40, 100, 2))
    s = run(DetectionState(), inputs(commit_events=events, configs=minute, tail_live=True), 100)
    # a tail-only cycle 61 s later: the offset and then the group are tombstoned by the expiry
    inp = inputs(
        offsets=_ranges(161),
        commit_events=(commit(None, 161, 3), group_event("Dead", 161, 4)),
        tail_live=True,
    )
    [f] = detect_offsets_lost(s, inp, 161, TH)
    assert (f.severity, f.cause, f.magnitude["offsets_lost"]) == ("info", "expired", 1)
    assert f.evidence["retention_seconds"] == 60


def test_detect_offsets_lost_expiry_reckoned_from_the_record_when_the_poll_saw_the_commit_first() -> None:
    from collectors.model import ConfigsObservation

    minute = ConfigsObservation("c", 100, (), broker=(("offsets.retention.minutes", "1"),))
    standalone = groups(103, {"g": "Empty"}, protocol_type="")
    # the committed poll at 103 sees the commit made at 100 before the tail delivers its record
    seen = inputs(
        committed=committed(103, {("g", T, 0): 40}), groups=standalone, configs=minute, tail_live=True
    )
    s = run(DetectionState(), seen, 103)
    s = run(s, inputs(commit_events=(commit(40, 100, 2),), tail_live=True), 104)
    assert s.commits[CommitKey("g", T, 0)].at == 100
    # expired 60 s after the commit, before 60 s after the poll: the offset, then the group, tombstoned
    tombs = (commit(None, 160.5, 3), group_event("Dead", 160.5, 4))
    inp = inputs(offsets=_ranges(161), commit_events=tombs, tail_live=True)
    [f] = detect_offsets_lost(s, inp, 161, TH)
    assert (f.severity, f.cause, f.magnitude["offsets_lost"]) == ("info", "expired", 1)


def _members_on(topics: tuple[str, ...], at: float = 100) -> DetectionState:
    """A classic group whose members subscribe to ``topics``, with commits on t[0] (40) and t[1] (70)."""
    events = (commit(40, at, 2), commit(70, at, 3, partition=1))
    group = (group_event("Stable", at, 1, topics=topics),)
    return run(DetectionState(), inputs(commit_events=events, group_events=group, tail_live=True), at)


def test_detect_offsets_lost_admin_offset_delete_of_tool_committed_memberless_group_info() -> None:
    # Bug: offsets committed by a tool (no member ever) and removed 30 s later by deleteConsumerGroupOffsets
    # paged twice as deleted_while_consuming. The broker only deletes offsets nobody subscribes to.
    events = (group_event("Empty", 100, 1), commit(40, 100, 2), commit(70, 100, 3, partition=1))
    s = run(DetectionState(), inputs(commit_events=events, tail_live=True), 100)
    removed = (commit(None, 130, 4), commit(None, 130, 5, partition=1))
    findings = detect_offsets_lost(
        s, inputs(offsets=_ranges(130), commit_events=removed, tail_live=True), 130, TH
    )
    assert [(f.severity, f.cause, f.topic) for f in findings] == [("info", "admin_offset_delete", None)]
    assert findings[0].magnitude["offsets_lost"] == 2


def test_detect_offsets_lost_admin_offset_delete_of_topic_no_member_subscribes_info() -> None:
    s = _members_on(("other",))
    inp = inputs(offsets=_ranges(130), commit_events=(commit(None, 130, 4),), tail_live=True)
    [f] = detect_offsets_lost(s, inp, 130, TH)
    assert (f.severity, f.cause, f.evidence["members_topics"]) == ("info", "admin_offset_delete", ("other",))


def test_detect_offsets_lost_tombstone_before_the_poll_that_set_the_groups_state_state_unknown() -> None:
    # Empty when its offset was deleted (an operator's --delete-offsets, 900 s after the last commit); members
    # joined, and a poll showing them Stable on the topic was evaluated before the tail delivered the
    # tombstone. The members came after the deletion: nothing shows anyone was consuming then.
    s = _tailed("Empty")
    s = run(s, inputs(groups=groups(1100, {"g": "Stable"}, assigned={"g": ((T, 0),)}), tail_live=True), 1100)
    inp = inputs(offsets=_ranges(1101), commit_events=(commit(None, 1000, 4),), tail_live=True)
    [f] = detect_offsets_lost(s, inp, 1101, TH)
    assert (f.severity, f.cause, f.evidence["group_state"]) == ("warning", "deleted", None)
    assert f.evidence["members_topics"] is None


def test_detect_offsets_lost_offset_vanishes_under_members_subscribed_critical_while_consuming() -> None:
    s = _members_on((T,))
    inp = inputs(offsets=_ranges(130), commit_events=(commit(None, 130, 4),), tail_live=True)
    [f] = detect_offsets_lost(s, inp, 130, TH)
    assert (f.severity, f.cause, f.topic, f.partition) == ("critical", "deleted_while_consuming", T, 0)
    assert f.evidence["members_topics"] == (T,)


def test_detect_offsets_lost_expiry_of_subscribed_offsets_of_a_live_group_critical_linkedin() -> None:
    # Live members, a quiet partition not committed for longer than the retention: the offsets are
    # tombstoned anyway (the LinkedIn incident). Expiry or not, the group was consuming that topic.
    s = _members_on((T,))
    later = 100 + RETENTION + 60
    inp = inputs(offsets=_ranges(later), commit_events=(commit(None, later, 4),), tail_live=True)
    [f] = detect_offsets_lost(s, inp, later, TH)
    assert (f.severity, f.cause) == ("critical", "deleted_while_consuming")


def test_detect_offsets_lost_expiry_of_unsubscribed_topic_of_a_live_group_info_expired() -> None:
    # KIP-211: offsets of a topic the members no longer subscribe to expire by commit timestamp
    s = _members_on(("other",))
    later = 100 + RETENTION + 60
    inp = inputs(offsets=_ranges(later), commit_events=(commit(None, later, 4),), tail_live=True)
    [f] = detect_offsets_lost(s, inp, later, TH)
    assert (f.severity, f.cause, f.partition) == ("info", "expired", None)


def test_detect_offsets_lost_polled_offset_of_topic_no_member_is_assigned_info_admin_offset_delete() -> None:
    assigned = {"g": (("other", 0),)}
    s = run(
        DetectionState(),
        inputs(
            committed=committed(10, {("g", T, 0): 5}), groups=groups(10, {"g": "Stable"}, assigned=assigned)
        ),
        10,
    )
    inp = inputs(
        offsets=_ranges(20),
        committed=committed(20, {}, groups=("g",)),
        groups=groups(20, {"g": "Stable"}, assigned=assigned),
    )
    [f] = detect_offsets_lost(s, inp, 20, TH)
    assert (f.severity, f.cause) == ("info", "admin_offset_delete")


def test_detect_offsets_lost_polled_offset_of_assigned_topic_vanishes_critical() -> None:
    assigned = {"g": ((T, 0),)}
    s = run(
        DetectionState(),
        inputs(
            committed=committed(10, {("g", T, 0): 5}), groups=groups(10, {"g": "Stable"}, assigned=assigned)
        ),
        10,
    )
    inp = inputs(
        offsets=_ranges(20),
        committed=committed(20, {}, groups=("g",)),
        groups=groups(20, {"g": "Stable"}, assigned=assigned),
    )
    [f] = detect_offsets_lost(s, inp, 20, TH)
    assert (f.severity, f.cause, f.partition) == ("critical", "deleted_while_consuming", 0)


@pytest.mark.parametrize(
    "tail_live, severity, cause",
    [
        # the live tail never showed the group's membership: nobody's offsets (a tool's, assign()'s)
        (True, "info", "admin_offset_delete"),
        # the tail still catching up: members may be in records not read yet, and it committed just now
        (False, "critical", "deleted_while_consuming"),
    ],
)
def test_detect_offsets_lost_group_never_seen_recent_commit(
    tail_live: bool, severity: str, cause: str
) -> None:
    s = run(DetectionState(), inputs(commit_events=(commit(40, 100, 1),), tail_live=tail_live), 100)
    inp = inputs(offsets=_ranges(150), commit_events=(commit(None, 150, 2),), tail_live=tail_live)
    [f] = detect_offsets_lost(s, inp, 150, TH)
    assert (f.severity, f.cause) == (severity, cause)


@pytest.mark.parametrize(
    "tail_live, severity, cause", [(True, "info", "admin_offset_delete"), (False, "warning", "deleted")]
)
def test_detect_offsets_lost_group_never_seen_idle(tail_live: bool, severity: str, cause: str) -> None:
    s = run(DetectionState(), inputs(commit_events=(commit(40, 100, 1),), tail_live=tail_live), 100)
    at = 100 + DAY
    inp = inputs(offsets=_ranges(at), commit_events=(commit(None, at, 2),), tail_live=tail_live)
    [f] = detect_offsets_lost(s, inp, at, TH)
    assert (f.severity, f.cause) == (severity, cause)


def test_detect_offsets_lost_expired_and_topic_deleted_in_one_cycle_mixed_info() -> None:
    from alerts.model import CommitEvent

    s = _tailed("Empty")
    gone = CommitEvent("c", "g", "gone", 0, 9, None, 100_000, 0, 10)
    s = run(s, inputs(commit_events=(gone,), tail_live=True), 101)
    later = 100 + RETENTION + 60
    tomb = CommitEvent("c", "g", "gone", 0, None, None, int(later * 1000), 0, 11)
    inp = inputs(
        metadata=metadata(later, {(T, 0): (1, 0, (1,)), (T, 1): (1, 0, (1,))}),
        commit_events=(commit(None, later, 12), tomb),
        tail_live=True,
    )
    [f] = detect_offsets_lost(s, inp, later, TH)
    assert (f.severity, f.cause, f.magnitude["offsets_lost"]) == ("info", "mixed", 2)
    assert f.evidence["causes"] == ("expired=1", "topic_deleted=1")


def test_loss_outcomes_while_consuming_held_until_the_topic_is_seen_then_critical() -> None:
    s = _members_on((T,))
    found, held = loss_outcomes(s, inputs(commit_events=(commit(None, 130, 4),), tail_live=True), 130, TH)
    assert found == () and [(p.key.partition, p.cause) for p in held] == [(0, "deleted_while_consuming")]
    s = run(s, inputs(commit_events=(commit(None, 130, 4),), tail_live=True), 130)
    assert len(s.pending_losses) == 1
    [f] = detect_offsets_lost(s, inputs(offsets=_ranges(135)), 135, TH)
    assert (f.severity, f.cause, f.partition, f.evidence["removed_at"]) == (
        "critical",
        "deleted_while_consuming",
        0,
        130,
    )
    assert run(s, inputs(offsets=_ranges(135)), 135).pending_losses == ()


def test_detect_offsets_lost_topic_deleted_under_subscribed_members_metadata_after_info_not_critical() -> (
    None
):
    # the tombstones of a deleted topic arrive before the metadata poll shows it gone
    s = _members_on((T,))
    tombs = (commit(None, 130, 4), commit(None, 130, 5, partition=1))
    s = run(s, inputs(commit_events=tombs, tail_live=True), 130)
    inp = inputs(metadata=metadata(150, {("other", 0): (1, 0, (1,))}))
    [f] = detect_offsets_lost(s, inp, 150, TH)
    assert (f.severity, f.cause, f.partition, f.magnitude["offsets_lost"]) == (
        "info",
        "topic_deleted",
        None,
        2,
    )


def test_detect_offsets_lost_topic_never_seen_again_pages_after_the_confirm_window() -> None:
    s = _members_on((T,))
    s = run(s, inputs(commit_events=(commit(None, 130, 4),), tail_live=True), 130)
    assert detect_offsets_lost(s, inputs(), 130 + TH.topic_confirm_seconds - 1, TH) == ()
    [f] = detect_offsets_lost(s, inputs(), 130 + TH.topic_confirm_seconds, TH)
    assert (f.severity, f.cause) == ("critical", "deleted_while_consuming")


def test_detect_offsets_lost_range_observed_before_the_tombstone_does_not_confirm_the_topic() -> None:
    s = _members_on((T,))
    inp = inputs(offsets=_ranges(129), commit_events=(commit(None, 130, 4),), tail_live=True)
    assert detect_offsets_lost(s, inp, 131, TH) == ()


def _members_on_topic_a() -> DetectionState:
    """:func:`_members_on` with t observed at 100 under topic id A, log 0-1000 on both partitions."""
    s = _members_on((T,))
    meta = metadata(100, {(T, 0): (1, 0, (1,)), (T, 1): (1, 0, (1,))}, topic_id="A")
    return run(s, inputs(metadata=meta, offsets=_ranges(100)), 100)


def test_detect_offsets_lost_topic_recreated_before_metadata_poll_info_topic_deleted_not_critical() -> None:
    # deleted, then re-created by the consumer's auto-create: the metadata poll lists it, under a new id
    s = _members_on_topic_a()
    s = run(s, inputs(commit_events=(commit(None, 130, 4),), tail_live=True), 130)
    meta = metadata(150, {(T, 0): (1, 0, (1,)), (T, 1): (1, 0, (1,))}, topic_id="B")
    [f] = detect_offsets_lost(s, inputs(metadata=meta), 150, TH)
    assert (f.severity, f.cause, f.partition) == ("info", "topic_deleted", None)


def test_detect_offsets_lost_topic_listed_under_the_same_id_after_the_loss_critical() -> None:
    s = _members_on_topic_a()
    s = run(s, inputs(commit_events=(commit(None, 130, 4),), tail_live=True), 130)
    meta = metadata(150, {(T, 0): (1, 0, (1,)), (T, 1): (1, 0, (1,))}, topic_id="A")
    [f] = detect_offsets_lost(s, inputs(metadata=meta), 150, TH)
    assert (f.severity, f.cause, f.partition) == ("critical", "deleted_while_consuming", 0)


def test_detect_offsets_lost_range_gone_back_after_the_loss_does_not_confirm_the_topic() -> None:
    # a log range that went back may be a re-created topic's: held until metadata tells
    s = _members_on_topic_a()
    reset = offsets(131, {(T, 0): (0, 0), (T, 1): (0, 0)})
    inp = inputs(offsets=reset, commit_events=(commit(None, 130, 4),), tail_live=True)
    assert detect_offsets_lost(s, inp, 131, TH) == ()
    _, held = loss_outcomes(s, inp, 131, TH)
    assert [p.key.partition for p in held] == [0]


def test_detect_offsets_lost_old_leaders_range_after_the_loss_does_not_confirm_a_known_id() -> None:
    # matrix (aiokafka, topic deleted under it): a leader not yet past the deletion answered the old log's
    # range after the tombstones; the metadata poll then showed the topic under a new id
    s = _members_on_topic_a()
    stale = metadata(100, {(T, 0): (1, 0, (1,)), (T, 1): (1, 0, (1,))}, topic_id="A")
    inp = inputs(metadata=stale, offsets=_ranges(131), commit_events=(commit(None, 130, 4),), tail_live=True)
    found, held = loss_outcomes(s, inp, 131, TH)
    assert found == () and [p.key.partition for p in held] == [0]
    s = run(s, inp, 131)
    meta = metadata(133, {(T, 0): (1, 0, (1,)), (T, 1): (1, 0, (1,))}, topic_id="B")
    [f] = detect_offsets_lost(s, inputs(metadata=meta), 133, TH)
    assert (f.severity, f.cause) == ("info", "topic_deleted")


def test_loss_outcomes_idle_loss_held_until_the_topic_is_seen_then_info() -> None:
    s = _tailed("Empty")
    at = 100 + DAY
    found, held = loss_outcomes(s, inputs(commit_events=(commit(None, at, 4),), tail_live=True), at, TH)
    assert found == () and [(p.key.partition, p.cause) for p in held] == [(0, "admin_offset_delete")]
    s = run(s, inputs(commit_events=(commit(None, at, 4),), tail_live=True), at)
    [f] = detect_offsets_lost(s, inputs(offsets=_ranges(at + 5)), at + 5, TH)
    assert (f.severity, f.cause) == ("info", "admin_offset_delete")


def test_detect_offsets_lost_topic_recreated_seen_before_the_tombstones_info_topic_deleted() -> None:
    # matrix at 10 workers (java, auto-create on): deleted and re-created between two metadata polls; the
    # poll lists it under the new id before the deleted topic's tombstones arrive, and never without it
    s = _members_on_topic_a()
    recreated = {(T, 0): (1, 0, (1,)), (T, 1): (1, 0, (1,))}
    s = run(s, inputs(metadata=metadata(120, recreated, topic_id="B")), 120)
    tombs = inputs(commit_events=(commit(None, 130, 4), commit(None, 130, 5, partition=1)), tail_live=True)
    found, held = loss_outcomes(s, tombs, 130, TH)
    assert held == ()
    [f] = found
    assert (f.severity, f.cause, f.partition, f.magnitude["offsets_lost"]) == (
        "info",
        "topic_deleted",
        None,
        2,
    )
    s = run(s, tombs, 130)
    assert detect_offsets_lost(s, inputs(metadata=metadata(150, recreated, topic_id="B")), 150, TH) == ()


def test_detect_offsets_lost_recreated_topic_seen_before_the_tombstones_with_metadata_info() -> None:
    # the same, the tombstones with the next metadata poll (the new id again)
    s = _members_on_topic_a()
    recreated = {(T, 0): (1, 0, (1,)), (T, 1): (1, 0, (1,))}
    s = run(s, inputs(metadata=metadata(120, recreated, topic_id="B")), 120)
    meta = metadata(131, recreated, topic_id="B")
    inp = inputs(metadata=meta, commit_events=(commit(None, 130, 4),), tail_live=True)
    [f] = detect_offsets_lost(s, inp, 131, TH)
    assert (f.severity, f.cause, f.partition) == ("info", "topic_deleted", None)


def test_detect_offsets_lost_commit_on_the_recreated_topic_lost_while_consuming_critical() -> None:
    # a commit made on the new topic, after it was seen, is the new topic's: its loss still pages
    s = _members_on_topic_a()
    recreated = {(T, 0): (1, 0, (1,)), (T, 1): (1, 0, (1,))}
    s = run(s, inputs(metadata=metadata(120, recreated, topic_id="B")), 120)
    s = run(s, inputs(commit_events=(commit(3, 140, 4),), tail_live=True), 140)
    meta = metadata(161, recreated, topic_id="B")
    inp = inputs(metadata=meta, commit_events=(commit(None, 160, 5),), tail_live=True)
    [f] = detect_offsets_lost(s, inp, 161, TH)
    assert (f.severity, f.cause, f.partition, f.magnitude["offset"]) == (
        "critical",
        "deleted_while_consuming",
        0,
        3,
    )
