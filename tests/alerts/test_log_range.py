from alerts.engine import evaluate
from alerts.log_range import detect_committed_outside_log
from alerts.model import COMMITTED_BELOW_LOG_START, COMMITTED_BEYOND_LOG_END, Finding
from alerts.state import DetectionState, PartitionKey, Recreation
from tests.alerts.builders import TH, T, commit, committed, groups, inputs, offsets

G = ("g", T, 0)


def test_detect_committed_outside_log_below_start_critical_messages_lost() -> None:
    inp = inputs(
        offsets=offsets(10, {(T, 0): (250, 900)}),
        committed=committed(10, {G: 100}),
        groups=groups(10, {"g": "Stable"}),
    )
    [f] = detect_committed_outside_log(DetectionState(), inp, 10, TH)
    assert (f.kind, f.severity, f.magnitude["messages_lost"]) == (COMMITTED_BELOW_LOG_START, "critical", 150)
    assert (f.evidence["log_start"], f.evidence["committed"]) == (250, 100)


def test_detect_committed_outside_log_below_start_empty_group_warning() -> None:
    inp = inputs(
        offsets=offsets(10, {(T, 0): (250, 900)}),
        committed=committed(10, {G: 100}),
        groups=groups(10, {"g": "Empty"}),
    )
    [f] = detect_committed_outside_log(DetectionState(), inp, 10, TH)
    assert f.severity == "warning"


def test_detect_committed_outside_log_beyond_end_critical_beyond_count() -> None:
    inp = inputs(offsets=offsets(10, {(T, 0): (0, 100)}), committed=committed(9, {G: 150}))
    [f] = detect_committed_outside_log(DetectionState(), inp, 10, TH)
    assert (f.kind, f.severity, f.magnitude["beyond"]) == (COMMITTED_BEYOND_LOG_END, "critical", 50)


def test_detect_committed_outside_log_equal_to_log_end_not_beyond() -> None:
    inp = inputs(offsets=offsets(10, {(T, 0): (0, 100)}), committed=committed(9, {G: 100}))
    assert detect_committed_outside_log(DetectionState(), inp, 10, TH) == ()


def test_detect_committed_outside_log_commit_newer_than_range_not_compared() -> None:
    # The tail saw a commit made after the log range was observed; the log has grown since.
    inp = inputs(offsets=offsets(10, {(T, 0): (0, 100)}), commit_events=(commit(130, 11, 1),), tail_live=True)
    assert detect_committed_outside_log(DetectionState(), inp, 12, TH) == ()


def test_detect_committed_outside_log_unknown_range_nothing() -> None:
    inp = inputs(offsets=offsets(10, {(T, 1): (0, 10)}), committed=committed(9, {G: 150}))
    assert detect_committed_outside_log(DetectionState(), inp, 10, TH) == ()


def test_detect_committed_outside_log_beyond_end_recommitted_after_observation_still_reported() -> None:
    from alerts.state import DetectionState as State
    from tests.alerts.builders import run

    prev = run(
        State(),
        inputs(offsets=offsets(10, {(T, 0): (0, 150)}), commit_events=(commit(150, 10, 1),), tail_live=True),
        10,
    )
    inp = inputs(offsets=offsets(20, {(T, 0): (0, 100)}), commit_events=(commit(150, 25, 2),), tail_live=True)
    [f] = detect_committed_outside_log(prev, inp, 26, TH)
    assert (f.kind, f.magnitude["beyond"]) == (COMMITTED_BEYOND_LOG_END, 50)


# A topic deleted and re-created (new topic id) under a caught-up consumer at 50: its commits of 50 are
# the deleted topic's, not a position a truncation passed.
ONE = {(T, 0): (1, 0, (1,))}


def _caught_up() -> DetectionState:
    """Topic t (id A) 0-50 observed at 10, group g committed 50 by then."""
    from tests.alerts.builders import metadata, run

    inp = inputs(
        metadata=metadata(10, ONE, topic_id="A"),
        offsets=offsets(10, {(T, 0): (0, 50)}),
        commit_events=(commit(50, 10, 1),),
        tail_live=True,
    )
    return run(DetectionState(), inp, 10)


def _beyond(found: tuple[Finding, ...]) -> list[Finding]:
    return [f for f in found if f.kind == COMMITTED_BEYOND_LOG_END]


def test_evaluate_recreated_topic_stale_commit_beyond_new_end_warning_topic_recreated() -> None:
    from tests.alerts.builders import metadata, run

    new = metadata(20, ONE, topic_id="B")
    s = run(_caught_up(), inputs(metadata=new, offsets=offsets(20, {(T, 0): (0, 0)})), 20)
    assert s.recreated[(T, 0)] == Recreation("A", "B", 20, 20)
    # the consumer commits its position in the deleted topic into the new, empty one
    stale = inputs(
        metadata=new,
        offsets=offsets(31, {(T, 0): (0, 0)}),
        commit_events=(commit(50, 30, 2),),
        tail_live=True,
    )

    [f] = _beyond(evaluate(s, stale, 31, TH)[0])

    assert (f.severity, f.cause, f.magnitude["beyond"]) == ("warning", "topic_recreated", 50)
    assert (f.evidence["old_topic_id"], f.evidence["new_topic_id"], f.evidence["new_topic_seen_at"]) == (
        "A",
        "B",
        20,
    )
    assert "stale position of the deleted topic" in f.summary and "auto.offset.reset" in f.summary


def test_evaluate_recreated_topic_commit_of_deleted_topic_held_until_metadata_then_warning() -> None:
    from tests.alerts.builders import metadata

    s = _caught_up()
    # the re-created topic's first range, joined with the latest metadata: the old id
    untold = inputs(metadata=metadata(10, ONE, topic_id="A"), offsets=offsets(21, {(T, 0): (0, 0)}))
    first, s = evaluate(s, untold, 21, TH)
    assert _beyond(first) == []  # truncated or another topic: not told yet

    told = inputs(metadata=metadata(30, ONE, topic_id="B"), offsets=offsets(30, {(T, 0): (0, 0)}))
    [f] = _beyond(evaluate(s, told, 30, TH)[0])

    assert (f.severity, f.cause, f.magnitude["beyond"]) == ("warning", "topic_recreated", 50)
    assert "belongs to the deleted topic" in f.summary


def test_evaluate_deleted_then_seen_again_commit_beyond_new_end_warning_topic_recreated() -> None:
    from tests.alerts.builders import metadata, run

    gone = metadata(20, {("other", 0): (1, 0, (1,))}, topic_id="X")
    s = run(_caught_up(), inputs(metadata=gone), 20)
    assert s.recreated[(T, 0)] == Recreation("A", None, 20, None)
    # re-created since: its ranges are listed before metadata lists it (no topic id yet)
    again = inputs(
        metadata=gone,
        offsets=offsets(26, {(T, 0): (0, 0)}),
        commit_events=(commit(50, 25, 2),),
        tail_live=True,
    )

    found, s = evaluate(s, again, 26, TH)

    [f] = _beyond(found)
    assert (f.severity, f.cause, f.evidence["new_topic_id"]) == ("warning", "topic_recreated", None)
    told = inputs(metadata=metadata(30, ONE, topic_id="B"), offsets=offsets(31, {(T, 0): (0, 0)}))
    [f] = _beyond(evaluate(s, told, 31, TH)[0])
    assert (f.severity, f.evidence["old_topic_id"], f.evidence["new_topic_id"]) == ("warning", "A", "B")


def test_evaluate_truncation_below_commit_made_while_log_held_it_critical() -> None:
    from tests.alerts.builders import metadata

    # the same topic id: the log end went back under the group, nothing was re-created
    same = inputs(metadata=metadata(20, ONE, topic_id="A"), offsets=offsets(20, {(T, 0): (0, 30)}))

    [f] = _beyond(evaluate(_caught_up(), same, 20, TH)[0])

    assert (f.severity, f.cause, f.magnitude["beyond"]) == ("critical", None, 20)


def test_evaluate_recreated_topic_truncated_below_commit_it_held_critical() -> None:
    from tests.alerts.builders import metadata, run

    new = metadata(20, ONE, topic_id="B")
    s = run(_caught_up(), inputs(metadata=new, offsets=offsets(20, {(T, 0): (0, 0)})), 20)
    # the new topic grows to 80, the group reads it to 70: a position in the new log
    s = run(s, inputs(metadata=new, offsets=offsets(30, {(T, 0): (0, 80)})), 30)
    s = run(s, inputs(commit_events=(commit(70, 31, 2),), tail_live=True), 31)
    cut = inputs(metadata=metadata(40, ONE, topic_id="B"), offsets=offsets(40, {(T, 0): (0, 60)}))

    [f] = _beyond(evaluate(s, cut, 40, TH)[0])

    assert (f.severity, f.cause, f.magnitude["beyond"]) == ("critical", None, 10)


def test_stale_range_of_new_topic_held_offset_not_stale() -> None:
    """Even while its entry is kept, a commit the re-created topic's log held once is no stale one."""
    from alerts.log_range import _stale
    from alerts.state import CommitPoint, PartitionPoint, RangeSample

    s = DetectionState(ranges={(T, 0): (RangeSample(10, 0, 50), RangeSample(30, 0, 80))})
    entry = Recreation("A", "B", 20, 20)
    point = CommitPoint(70, None, 31, 31, "tail")
    now = PartitionPoint(0, 60, topic_id="B")
    assert _stale(s, PartitionKey(T, 0), now, 40, point, entry) is False
    assert _stale(s, PartitionKey(T, 0), now, 40, CommitPoint(90, None, 31, 31, "tail"), entry) is True
