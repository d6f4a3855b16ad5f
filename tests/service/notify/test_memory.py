"""The dispatcher's memory queue (the store refusing writes): ids, order, outcomes."""

from __future__ import annotations

import time

from service.notify.memory import MemoryQueue
from store.notification_records import DELIVERED, PENDING, NewNotification, Outcome


def _row(alert_id: str, event: str = "firing", receiver: str = "hook") -> NewNotification:
    return NewNotification(receiver, alert_id, event, {"event": event})


def test_memory_queue_ids_negative_and_never_repeated_by_a_later_queue() -> None:
    first = MemoryQueue()
    first.add([_row("a"), _row("b")], 0.0)
    time.sleep(0.001)
    later = MemoryQueue()  # a later failure spell after a restart
    later.add([_row("c")], 0.0)

    ids = [n.id for n in first.rows()] + [n.id for n in later.rows()]
    assert all(i < 0 for i in ids)
    assert len(set(ids)) == 3


def test_memory_queue_resolved_waits_behind_its_firing_retry() -> None:
    q = MemoryQueue(first_id=-1)
    q.add([_row("a"), _row("a", "resolved"), _row("b")], 100.0)
    fire_a = q.rows()[0]

    q.record([Outcome(fire_a.id, PENDING, 100.0, next_attempt_at=160.0, error="503")])

    assert [n.alert_id for n in q.due(110.0)] == ["b"]  # a's resolved waits for a's firing
    assert [(n.alert_id, n.event) for n in q.due(160.0)] == [
        ("a", "firing"),
        ("a", "resolved"),
        ("b", "firing"),
    ]


def test_memory_queue_delivered_row_told_and_no_longer_due() -> None:
    q = MemoryQueue(first_id=-1)
    q.add([_row("a")], 100.0)
    [row] = q.rows()

    q.record([Outcome(row.id, DELIVERED, 101.0)])

    assert q.due(200.0) == []
    assert q.told() == {("hook", "a")}
    [done] = q.rows()
    assert (done.state, done.attempts, done.delivered_at) == (DELIVERED, 1, 101.0)
