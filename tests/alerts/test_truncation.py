from dataclasses import replace

import pytest

from alerts.engine import evaluate
from alerts.model import EPOCH_DIVERGENCE, LOG_TRUNCATION, TOPIC_DELETED, EpochEnd
from alerts.state import CycleInputs, DetectionState
from alerts.topic_change import unconfirmed_resets
from alerts.truncation import detect_epoch_divergence, detect_log_truncations
from collectors.model import OffsetsObservation, PartitionOffsets
from tests.alerts.builders import TH, C, T, commit, committed, inputs, kinds, metadata, offsets, run


def _before() -> DetectionState:
    return run(
        DetectionState(),
        inputs(
            metadata=metadata(10, {(T, 0): (1, 4, (1,))}, topic_id="A"),
            offsets=offsets(10, {(T, 0): (0, 150)}),
            committed=committed(10, {("g", T, 0): 150, ("h", T, 0): 90}),
        ),
        10,
    )


def test_detect_log_truncations_end_back_to_leader_outside_isr_unclean_cause() -> None:
    inp = inputs(
        metadata=metadata(20, {(T, 0): (2, 5, (2,))}, topic_id="A"), offsets=offsets(20, {(T, 0): (0, 100)})
    )
    [f] = detect_log_truncations(_before(), inp, 20, TH)
    assert (f.kind, f.severity, f.cause) == (LOG_TRUNCATION, "critical", "unclean_leader_election")
    assert f.magnitude["messages_truncated"] == 50
    assert (f.evidence["old_leader"], f.evidence["new_leader"]) == (1, 2)
    assert (f.evidence["old_leader_epoch"], f.evidence["new_leader_epoch"]) == (4, 5)
    assert f.evidence["groups_beyond_log_end"] == ("g",)


def test_detect_log_truncations_topic_id_changed_nothing_topic_event_instead() -> None:
    # a topic deleted and re-created: not a truncation (alerts.topic_events says what was deleted)
    inp = inputs(
        metadata=metadata(20, {(T, 0): (1, 0, (1,))}, topic_id="B"), offsets=offsets(20, {(T, 0): (0, 3)})
    )
    assert detect_log_truncations(_before(), inp, 20, TH) == ()
    found = [(f.kind, f.cause) for f in evaluate(_before(), inp, 20, TH)[0]]
    assert (TOPIC_DELETED, "recreated") in found and not [k for k, _ in found if k == LOG_TRUNCATION]


def _stale(at: float, end: int) -> CycleInputs:
    """A log range at ``at`` handed with the metadata of 10 (the service's latest: it polls it less often)."""
    return inputs(
        metadata=metadata(10, {(T, 0): (1, 4, (1,))}, topic_id="A"), offsets=offsets(at, {(T, 0): (0, end)})
    )


def test_detect_log_truncations_end_back_before_metadata_since_waits_then_same_id_critical() -> None:
    assert detect_log_truncations(_before(), _stale(20, 100), 20, TH) == ()
    s = run(_before(), _stale(20, 100), 20)
    assert s.partitions[(T, 0)].log_end == 150  # the point from before stays until the topic is told
    s = run(s, _stale(25, 100), 25)
    inp = inputs(
        metadata=metadata(30, {(T, 0): (1, 4, (1,))}, topic_id="A"), offsets=offsets(30, {(T, 0): (0, 100)})
    )
    [f] = detect_log_truncations(s, inp, 30, TH)
    assert (f.kind, f.severity, f.magnitude["messages_truncated"]) == (LOG_TRUNCATION, "critical", 50)


def test_detect_log_truncations_end_back_under_a_newer_leader_epoch_judged_at_once() -> None:
    # An unclean election: the range comes from leader epoch 5 (the last was 4) while metadata, polled less
    # often (or failing while brokers restart), is older than it. Judged now, with the group still beyond.
    inp = inputs(
        metadata=metadata(10, {(T, 0): (1, 4, (1,))}, topic_id="A"),
        offsets=OffsetsObservation(C, 20, (PartitionOffsets(T, 0, 0, 100, 2, 5),)),
    )
    [f] = detect_log_truncations(_before(), inp, 20, TH)
    assert (f.severity, f.magnitude["messages_truncated"]) == ("critical", 50)
    assert f.evidence["groups_beyond_log_end"] == ("g",)


def test_detect_log_truncations_metadata_taken_after_the_first_reset_range_confirms_id() -> None:
    s = run(_before(), _stale(20, 100), 20)
    inp = inputs(
        metadata=metadata(22, {(T, 0): (1, 4, (1,))}, topic_id="A"), offsets=offsets(25, {(T, 0): (0, 100)})
    )
    [f] = detect_log_truncations(s, inp, 25, TH)
    assert (f.severity, f.cause) == ("critical", "unknown")


def test_detect_log_truncations_no_metadata_for_topic_confirm_seconds_judged_anyway() -> None:
    s = run(_before(), _stale(20, 100), 20)
    late = 20 + TH.topic_confirm_seconds
    assert detect_log_truncations(s, _stale(late - 1, 100), late - 1, TH) == ()
    [f] = detect_log_truncations(s, _stale(late, 100), late, TH)
    assert (f.severity, f.magnitude["messages_truncated"]) == ("critical", 50)


def test_detect_log_truncations_end_growing_after_leader_change_nothing() -> None:
    inp = inputs(
        metadata=metadata(20, {(T, 0): (2, 5, (1, 2))}, topic_id="A"), offsets=offsets(20, {(T, 0): (0, 150)})
    )
    assert detect_log_truncations(_before(), inp, 20, TH) == ()


def test_detect_log_truncations_no_previous_range_nothing() -> None:
    inp = inputs(offsets=offsets(20, {(T, 0): (0, 1)}))
    assert detect_log_truncations(DetectionState(), inp, 20, TH) == ()


def _committed_epoch(epoch: int | None) -> DetectionState:
    ev = replace(commit(150, 1, 1), leader_epoch=epoch)
    return run(DetectionState(), inputs(commit_events=(ev,), tail_live=True), 2)


def _ranged(log_end: int, ends: tuple[EpochEnd, ...]) -> CycleInputs:
    """The epoch ends with a log range of the partition observed after the commit (at 4)."""
    return inputs(offsets=offsets(4, {(T, 0): (0, log_end)}), epoch_ends=ends)


@pytest.mark.parametrize("log_end", [150, 180])
def test_detect_epoch_divergence_committed_past_epoch_end_inside_the_log_critical(log_end: int) -> None:
    # 150 committed at epoch 3, which ended at 100: the log grew back to (or past) 150 under a later epoch
    ends = (EpochEnd(T, 0, 3, 3, 100),)
    [f] = detect_epoch_divergence(_committed_epoch(3), _ranged(log_end, ends), 5, TH)
    assert (f.kind, f.severity, f.group) == (EPOCH_DIVERGENCE, "critical", "g")
    assert f.magnitude == {"divergence_offset": 100, "messages_diverged": 50}


@pytest.mark.parametrize("log_end", [100, 149])
def test_detect_epoch_divergence_commit_beyond_the_log_end_nothing(log_end: int) -> None:
    # committed_beyond_log_end says it (tests/alerts/test_log_range.py): not a second claim of the commit
    ends = (EpochEnd(T, 0, 3, 3, 100),)
    assert detect_epoch_divergence(_committed_epoch(3), _ranged(log_end, ends), 5, TH) == ()


def test_detect_epoch_divergence_without_a_log_range_nothing() -> None:
    ends = (EpochEnd(T, 0, 3, 3, 100),)
    assert detect_epoch_divergence(_committed_epoch(3), inputs(epoch_ends=ends), 5, TH) == ()


def test_detect_epoch_divergence_epoch_ends_after_committed_nothing() -> None:
    ends = (EpochEnd(T, 0, 3, 3, 150),)
    assert detect_epoch_divergence(_committed_epoch(3), _ranged(180, ends), 5, TH) == ()


def test_detect_epoch_divergence_undefined_answer_nothing() -> None:
    ends = (EpochEnd(T, 0, 3, -1, -1),)
    assert detect_epoch_divergence(_committed_epoch(3), _ranged(180, ends), 5, TH) == ()


def test_detect_epoch_divergence_commit_without_epoch_nothing() -> None:
    ends = (EpochEnd(T, 0, 3, 3, 100),)
    assert detect_epoch_divergence(_committed_epoch(None), _ranged(180, ends), 5, TH) == ()


def test_detect_log_truncations_leader_seen_by_metadata_first_still_unclean_cause() -> None:
    prev = run(_before(), inputs(metadata=metadata(15, {(T, 0): (2, 5, (2,))}, topic_id="A")), 15)
    inp = inputs(
        metadata=metadata(20, {(T, 0): (2, 5, (2,))}, topic_id="A"), offsets=offsets(20, {(T, 0): (0, 100)})
    )
    [f] = detect_log_truncations(prev, inp, 20, TH)
    assert (f.cause, f.evidence["old_leader"], f.evidence["new_leader"]) == ("unclean_leader_election", 1, 2)
    assert f.magnitude["messages_truncated"] == 50


def test_detect_log_truncations_end_back_under_the_same_epoch_stale_metadata_nothing() -> None:
    # A topic re-created: its leader answers the range under epoch 4 again (epochs from 0, here equal to the
    # old topic's last) while a broker that has not applied the deletion yet still lists the old id in
    # metadata taken after the range. No leader change gives no truncation: nothing, and still waiting.
    inp = inputs(
        metadata=metadata(21, {(T, 0): (1, 4, (1,))}, topic_id="A"),
        offsets=OffsetsObservation(C, 20, (PartitionOffsets(T, 0, 0, 3, 1, 4),)),
    )
    assert detect_log_truncations(_before(), inp, 21, TH) == ()
    assert unconfirmed_resets(_before(), inp, TH) == {(T, 0)}


def test_detect_log_truncations_same_epoch_past_topic_confirm_seconds_judged() -> None:
    # metadata never told another id in all that time: judged as it stands (the last point's epoch came from
    # metadata, which may have run ahead of the range; a truncation is never silenced for good)
    late = 20 + TH.topic_confirm_seconds
    s = run(_before(), _stale(20, 100), 20)
    inp = inputs(
        metadata=metadata(10, {(T, 0): (1, 4, (1,))}, topic_id="A"),
        offsets=OffsetsObservation(C, late, (PartitionOffsets(T, 0, 0, 100, 1, 4),)),
    )
    [f] = detect_log_truncations(s, inp, late, TH)
    assert (f.severity, f.magnitude["messages_truncated"]) == ("critical", 50)


def test_standing_commit_beyond_the_log_end_one_claim_through_a_leader_change_then_divergence() -> None:
    """A monitor finds 50 committed at epoch 0 past a log ending at 0 (truncated, or the topic re-created:
    it cannot tell): committed_beyond_log_end. A leader change makes epoch 0's end askable (0): still that
    one claim, no second page for the same commit. The log grows past 50 under the new epoch: the offset is
    in the log, its messages not the group's: epoch_divergence, and no longer beyond the log end."""
    state = run(
        DetectionState(), inputs(commit_events=(commit(50, 1, 1, leader_epoch=0),), tail_live=True), 2
    )
    first = inputs(metadata=metadata(10, {(T, 0): (1, 0, (1, 2))}), offsets=offsets(10, {(T, 0): (0, 0)}))
    found, state = evaluate(state, first, 10, TH)
    assert kinds(found) == ["committed_beyond_log_end"]
    moved = inputs(
        metadata=metadata(20, {(T, 0): (2, 1, (1, 2))}),
        offsets=offsets(20, {(T, 0): (0, 0)}),
        epoch_ends=(EpochEnd(T, 0, 0, 0, 0),),
    )
    found, state = evaluate(state, moved, 20, TH)
    assert kinds(found) == ["committed_beyond_log_end"]
    grown = inputs(offsets=offsets(30, {(T, 0): (0, 80)}), epoch_ends=(EpochEnd(T, 0, 0, 0, 0),))
    found, _ = evaluate(state, grown, 30, TH)
    assert kinds(found) == ["epoch_divergence"]
    assert found[0].magnitude == {"divergence_offset": 0, "messages_diverged": 50}
