"""A topic deleted (or deleted and re-created by a consumer's auto-create) under groups: one info event
about the topic, a warning per group that had not read all of it, never a page."""

from alerts.engine import evaluate
from alerts.model import LOG_TRUNCATION, OFFSETS_LOST, TOPIC_DELETED, Finding
from alerts.state import DetectionState
from alerts.topic_events import detect_topic_events
from collectors.model import ClusterMetadata
from tests.alerts.builders import TH, T, commit, group_event, inputs, metadata, offsets, run

PAGES = ("warning", "critical")
BOTH = {(T, 0): (1, 0, (1,)), (T, 1): (1, 0, (1,))}


def _gone(at: float) -> ClusterMetadata:
    """A complete metadata observation at ``at`` without topic ``t``."""
    return metadata(at, {("other", 0): (1, 0, (1,))}, topic_id="X")


def _reading(state: str, committed: tuple[int, int], group: str = "g") -> DetectionState:
    """Topic t (id A, partitions 0 and 1, log 0-1000 each) observed at 10, ``group`` in ``state``
    (members subscribed to t unless Empty) having committed ``committed`` by then."""
    topics = (T,) if state != "Empty" else ()
    events = (
        group_event(state, 10, 1, group=group, topics=topics),
        commit(committed[0], 10, 2, group=group),
        commit(committed[1], 10, 3, group=group, partition=1),
    )
    inp = inputs(
        metadata=metadata(10, BOTH, topic_id="A"),
        offsets=offsets(10, {(T, 0): (0, 1000), (T, 1): (0, 1000)}),
        commit_events=events,
        tail_live=True,
    )
    return run(DetectionState(), inp, 10)


def _tombstones(s: DetectionState, at: float, group: str = "g") -> tuple[tuple[Finding, ...], DetectionState]:
    """The deletion's tombstones of ``group``'s two offsets, read by the tail before any metadata poll."""
    tombs = (commit(None, at, 4, group=group), commit(None, at, 5, group=group, partition=1))
    return evaluate(s, inputs(commit_events=tombs, tail_live=True), at, TH)


def test_evaluate_topic_deleted_under_caught_up_active_group_info_only() -> None:
    s = _reading("Stable", (1000, 1000))
    held, s = _tombstones(s, 20)
    assert held == ()  # the topic's fate not known yet: nothing said, nothing paged

    found, _ = evaluate(s, inputs(metadata=_gone(30)), 30, TH)

    assert [(f.kind, f.severity, f.group, f.cause) for f in found] == [
        (TOPIC_DELETED, "info", None, "deleted"),
        (OFFSETS_LOST, "info", "g", "topic_deleted"),
    ]
    [event] = [f for f in found if f.kind == TOPIC_DELETED]
    assert event.magnitude == {"messages_deleted": 2000, "groups_with_unread": 0}
    assert event.evidence["groups"] == ("g=0",)
    assert event.evidence["last_log_ends"] == ("t[0]=1000", "t[1]=1000")
    assert (event.evidence["old_topic_id"], event.evidence["new_topic_id"]) == ("A", None)


def test_evaluate_topic_recreated_under_running_group_before_metadata_poll_no_page() -> None:
    s = _reading("Stable", (1000, 1000))
    stale = metadata(10, BOTH, topic_id="A")  # the latest metadata, handed with each fresh log range
    # the tombstones, then the consumer's auto-create: log 0-0 under the old id, and it commits 0 there
    tombs = (
        commit(None, 20, 4),
        commit(None, 20, 5, partition=1),
        commit(0, 22, 6),
        commit(0, 22, 7, partition=1),
    )
    reset = offsets(21, {(T, 0): (0, 0), (T, 1): (0, 0)})
    first, s = evaluate(s, inputs(metadata=stale, offsets=reset, commit_events=tombs, tail_live=True), 22, TH)
    assert first == ()  # a log end gone back and offsets gone, under a topic id nobody confirmed yet

    fresh = inputs(
        metadata=metadata(30, BOTH, topic_id="B"), offsets=offsets(30, {(T, 0): (0, 0), (T, 1): (0, 0)})
    )
    found, after = evaluate(s, fresh, 30, TH)

    assert [(f.kind, f.severity, f.group, f.cause) for f in found] == [
        (TOPIC_DELETED, "info", None, "recreated"),
        (OFFSETS_LOST, "info", "g", "topic_deleted"),
    ]
    assert (found[0].evidence["old_topic_id"], found[0].evidence["new_topic_id"]) == ("A", "B")
    assert found[0].evidence["groups"] == ("g=0",)
    assert after.partitions[(T, 0)].topic_id == "B"
    assert evaluate(after, inputs(metadata=metadata(35, BOTH, topic_id="B")), 35, TH)[0] == ()


def test_detect_topic_events_deleted_group_200_behind_on_one_partition_warning_exact() -> None:
    s = _reading("Stable", (800, 1000))
    _, s = _tombstones(s, 20)

    found = detect_topic_events(s, inputs(metadata=_gone(30)), 30, TH)

    assert [(f.kind, f.severity, f.group, f.topic, f.partition) for f in found] == [
        (TOPIC_DELETED, "info", None, T, None),
        (TOPIC_DELETED, "warning", "g", T, None),
    ]
    event, loss = found
    assert loss.magnitude == {"messages_deleted_unread": 200}
    assert loss.evidence["unread"] == ("t[0]=200", "t[1]=0")
    assert loss.evidence["committed"] == ("t[0]=800", "t[1]=1000")
    assert event.evidence["groups"] == ("g=200",)
    assert event.magnitude["groups_with_unread"] == 1


def test_detect_topic_events_deleted_before_tombstones_uses_committed_offsets_still_known() -> None:
    s = _reading("Stable", (800, 1000))  # no tombstone read yet: the metadata poll came first

    found = detect_topic_events(s, inputs(metadata=_gone(30)), 30, TH)

    assert [(f.severity, f.group, f.magnitude.get("messages_deleted_unread")) for f in found] == [
        ("info", None, None),
        ("warning", "g", 200),
    ]


def test_evaluate_topic_deleted_empty_group_with_history_warning_and_topic_deleted_not_offset_delete() -> (
    None
):
    s = _reading("Empty", (950, 1000), group="e")
    held, s = _tombstones(s, 20, group="e")
    assert held == ()  # an Empty group's offsets vanishing alone would be an OffsetDelete: held too

    found, _ = evaluate(s, inputs(metadata=_gone(30)), 30, TH)

    assert [(f.kind, f.severity, f.group, f.cause) for f in found] == [
        (TOPIC_DELETED, "info", None, "deleted"),
        (TOPIC_DELETED, "warning", "e", "deleted"),
        (OFFSETS_LOST, "info", "e", "topic_deleted"),
    ]
    assert found[1].magnitude == {"messages_deleted_unread": 50}


def test_detect_topic_events_committed_below_log_start_counts_from_log_start() -> None:
    s = _reading("Stable", (100, 1000))
    s = run(
        s, inputs(metadata=metadata(15, BOTH, topic_id="A"), offsets=offsets(15, {(T, 0): (400, 1000)})), 15
    )

    [_, loss] = detect_topic_events(s, inputs(metadata=_gone(30)), 30, TH)

    assert loss.magnitude == {"messages_deleted_unread": 600}  # retention took 100-399 before


def test_detect_topic_events_topic_still_listed_same_id_nothing() -> None:
    s = _reading("Stable", (800, 1000))
    inp = inputs(metadata=metadata(30, BOTH, topic_id="A"), offsets=offsets(30, {(T, 0): (0, 1000)}))
    assert detect_topic_events(s, inp, 30, TH) == ()


def test_detect_topic_events_incomplete_metadata_without_the_topic_nothing() -> None:
    from dataclasses import replace

    from collectors.model import Failure

    s = _reading("Stable", (800, 1000))
    partial = replace(_gone(30), failures=(Failure("broker", "2", "KafkaTimeoutError", "timed out"),))
    assert detect_topic_events(s, inputs(metadata=partial), 30, TH) == ()


def test_evaluate_topic_recreated_no_log_truncation_no_page_even_when_metadata_first() -> None:
    s = _reading("Stable", (1000, 1000))
    found, _ = evaluate(s, inputs(metadata=metadata(30, BOTH, topic_id="B")), 30, TH)
    assert [(f.kind, f.cause) for f in found] == [(TOPIC_DELETED, "recreated")]
    assert not [f for f in found if f.kind == LOG_TRUNCATION or f.severity in PAGES]
