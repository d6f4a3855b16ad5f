import sqlite3

from service.notify.fanout import FanOut
from store.alerts import AlertStore
from store.notification_records import Outcome
from store.notifications import NotificationStore
from store.settings import StoreSettings
from tests.service.notify.builders import T0, alert, change, fire, resolved, silence, webhook

FAN = FanOut([webhook()])


def test_queue_advance_consumes_each_transition_once(
    alert_store: AlertStore, queue: NotificationStore
) -> None:
    fire(alert_store, alert())

    first = queue.advance(FAN, T0)
    second = queue.advance(FAN, T0 + 1)

    assert (first.added, first.consumed, second.added, second.consumed) == (1, 1, 0, 0)
    assert [(n.receiver, n.event, n.state) for n in queue.notifications()] == [("hook", "firing", "pending")]


def test_queue_advance_catch_up_only_when_wanted(alert_store: AlertStore, queue: NotificationStore) -> None:
    queue.add_silence(silence(("cluster", "=", "prod")))
    fire(alert_store, alert())
    queue.advance(FAN, T0, catch_up=lambda silences, now: False)  # recorded as silenced
    queue.expire_silence("si-1", T0 + 5)

    skipped = queue.advance(FAN, T0 + 6, catch_up=lambda silences, now: False)
    asked: list[int] = []
    caught = queue.advance(FAN, T0 + 7, catch_up=lambda silences, now: asked.append(len(silences)) or True)

    assert (skipped.added, skipped.caught_up) == (0, False)
    assert (caught.added, caught.caught_up, asked) == (1, True, [0])  # the expired silence is not read
    assert [(n.event, n.state) for n in queue.notifications()] == [
        ("firing", "silenced"),
        ("firing", "pending"),
    ]


def test_queue_advance_transitions_too_old_to_fan_out_force_the_catch_up(
    alert_store: AlertStore, queue: NotificationStore
) -> None:
    fire(alert_store, alert())

    step = queue.advance(FAN, T0 + 100, oldest=T0 + 50, catch_up=lambda silences, now: False)

    assert (step.consumed, step.skipped, step.caught_up, step.added) == (1, 1, True, 1)
    assert [(n.event, n.state) for n in queue.notifications()] == [("firing", "pending")]


def test_queue_advance_batches_report_more(alert_store: AlertStore, queue: NotificationStore) -> None:
    for n in range(3):
        fire(alert_store, alert(f"al-{n}", partition=n))

    steps = [queue.advance(FAN, T0, batch=2), queue.advance(FAN, T0, batch=2)]

    assert [(s.consumed, s.more) for s in steps] == [(2, True), (1, False)]
    assert len(queue.notifications()) == 3


def test_queue_advance_old_transitions_consumed_without_rows(
    alert_store: AlertStore, queue: NotificationStore
) -> None:
    a = fire(alert_store, alert())
    change(alert_store, resolved(a, T0 + 1), "resolved", T0 + 1)

    step = queue.advance(FAN, T0 + 100, oldest=T0 + 50)

    assert (step.consumed, step.added) == (2, 0)
    assert queue.notifications() == []


def test_queue_pending_survives_reopen(store_settings: StoreSettings, alert_store: AlertStore) -> None:
    with NotificationStore.open(store_settings) as first:
        fire(alert_store, alert())
        first.advance(FAN, T0)
        (row,) = first.due(T0)
        first.record([Outcome(row.id, "pending", T0, next_attempt_at=T0 + 30, error="HTTP 503")])

    with NotificationStore.open(store_settings) as reopened:
        (again,) = reopened.notifications()
        assert reopened.advance(FAN, T0 + 31).added == 0  # not fanned out a second time
        due = reopened.due(T0 + 31)

    assert (again.state, again.attempts, again.next_attempt_at, again.last_error) == (
        "pending",
        1,
        T0 + 30,
        "HTTP 503",
    )
    assert [n.id for n in due] == [row.id]


def test_queue_due_waits_for_older_row_of_same_alert(
    alert_store: AlertStore, queue: NotificationStore
) -> None:
    a = fire(alert_store, alert())
    fire(alert_store, alert("al-2", partition=9))
    queue.advance(FAN, T0)
    firing_row = queue.notifications(alert_id="al-1")[0]
    queue.record([Outcome(firing_row.id, "pending", T0, next_attempt_at=T0 + 60)])
    change(alert_store, resolved(a, T0 + 1), "resolved", T0 + 1)
    queue.advance(FAN, T0 + 2)

    due_now = queue.due(T0 + 2)
    due_later = queue.due(T0 + 60)

    assert [(n.alert_id, n.event) for n in due_now] == [("al-2", "firing")]
    assert [(n.alert_id, n.event) for n in due_later] == [
        ("al-1", "firing"),
        ("al-2", "firing"),
        ("al-1", "resolved"),
    ]


def test_queue_record_delivered_leaves_due(alert_store: AlertStore, queue: NotificationStore) -> None:
    fire(alert_store, alert())
    queue.advance(FAN, T0)
    (row,) = queue.due(T0)

    queue.record([Outcome(row.id, "delivered", T0 + 1)])

    (done,) = queue.notifications()
    assert (done.state, done.delivered_at, done.attempts, done.next_attempt_at) == (
        "delivered",
        T0 + 1,
        1,
        None,
    )
    assert queue.due(T0 + 100) == []
    assert queue.next_due() is None


def test_queue_prune_keeps_firing_row_of_firing_alert(
    alert_store: AlertStore, queue: NotificationStore
) -> None:
    a = fire(alert_store, alert())
    fire(alert_store, alert("al-2", partition=9))
    queue.advance(FAN, T0)
    change(alert_store, resolved(a, T0 + 1), "resolved", T0 + 1)
    queue.advance(FAN, T0 + 1)
    queue.record([Outcome(n.id, "delivered", T0 + 2) for n in queue.due(T0 + 2)])

    pruned = queue.prune(T0 + 10)

    assert pruned == 2  # al-1's firing and resolved
    assert [(n.alert_id, n.event) for n in queue.notifications()] == [("al-2", "firing")]
    assert queue.advance(FAN, T0 + 11).added == 0  # al-2 is still known as told: no catch-up


def test_queue_silenced_rows_recorded_and_never_due(
    alert_store: AlertStore, queue: NotificationStore
) -> None:
    queue.add_silence(silence(("cluster", "=", "prod")))
    fire(alert_store, alert())

    queue.advance(FAN, T0)

    assert [(n.state, n.silence_id) for n in queue.notifications()] == [("silenced", "si-1")]
    assert queue.due(T0 + 10_000) == []


def test_queue_silence_expired_firing_alert_queued(alert_store: AlertStore, queue: NotificationStore) -> None:
    queue.add_silence(silence(("cluster", "=", "prod")))
    fire(alert_store, alert())
    queue.advance(FAN, T0)

    expired = queue.expire_silence("si-1", T0 + 5)
    step = queue.advance(FAN, T0 + 6)

    assert expired is not None and expired.status(T0 + 5) == "expired"
    assert step.added == 1
    assert [(n.event, n.state) for n in queue.notifications()] == [
        ("firing", "silenced"),
        ("firing", "pending"),
    ]


def test_queue_expire_pending_silence_reads_expired(queue: NotificationStore) -> None:
    queue.add_silence(silence(("kind", "=", "x"), starts=T0 + 100, ends=T0 + 200))

    expired = queue.expire_silence("si-1", T0)

    assert expired is not None and expired.status(T0) == "expired"
    assert queue.expire_silence("nope", T0) is None


def test_queue_upgraded_store_skips_earlier_history(
    store_settings: StoreSettings, alert_store: AlertStore
) -> None:
    fire(alert_store, alert())  # before the queue existed: pretend an older schema by rewinding it
    conn = sqlite3.connect(store_settings.path)
    conn.execute("DROP TABLE notifications")
    conn.execute("DROP TABLE notify_progress")
    conn.execute("DROP TABLE silences")
    conn.execute("PRAGMA user_version = 4")
    conn.commit()
    conn.close()

    with NotificationStore.open(store_settings) as upgraded:
        step = upgraded.advance(FAN, T0)
        rows = upgraded.notifications()

    assert step.consumed == 0  # the old transition is history
    assert [(n.event, n.transition_seq) for n in rows] == [("firing", None)]  # caught up once instead
