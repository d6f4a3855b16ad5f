"""The notification queue and silences on both backends: the queue tests of tests/service/notify, run here
against the parametrised store (SQLite and PostgreSQL), and the operations they leave out."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from service.notify.fanout import FanOut
from store.alerts import AlertStore
from store.notification_records import DELIVERED, PENDING, Notification, Outcome
from store.notifications import NotificationStore
from store.settings import StoreSettings
from tests.service.notify.builders import T0, alert, fire, webhook
from tests.service.notify.test_store_notifications import (  # noqa: F401  (collected here, on both backends)
    test_queue_advance_batches_report_more,
    test_queue_advance_catch_up_only_when_wanted,
    test_queue_advance_consumes_each_transition_once,
    test_queue_advance_old_transitions_consumed_without_rows,
    test_queue_advance_transitions_too_old_to_fan_out_force_the_catch_up,
    test_queue_due_waits_for_older_row_of_same_alert,
    test_queue_expire_pending_silence_reads_expired,
    test_queue_pending_survives_reopen,
    test_queue_prune_keeps_firing_row_of_firing_alert,
    test_queue_record_delivered_leaves_due,
    test_queue_silence_expired_firing_alert_queued,
    test_queue_silenced_rows_recorded_and_never_due,
)

FAN = FanOut([webhook()])


@pytest.fixture
def store_settings(settings: StoreSettings) -> StoreSettings:
    return settings


@pytest.fixture
def alert_store(settings: StoreSettings) -> Iterator[AlertStore]:
    with AlertStore.open(settings) as opened:
        yield opened


@pytest.fixture
def queue(settings: StoreSettings, alert_store: AlertStore) -> Iterator[NotificationStore]:
    with NotificationStore.open(settings) as opened:
        yield opened


def _kept(alert_id: str, state: str, at: float) -> Notification:
    return Notification(
        id=-1, receiver="hook", alert_id=alert_id, event="firing", payload={"n": 1}, state=state,
        created_at=at, attempts=1, next_attempt_at=at + 5 if state == PENDING else None,
        delivered_at=at if state == DELIVERED else None, last_error="timeout",
    )  # fmt: skip


def test_queue_adopt_told_next_due_and_delivered_firing(
    alert_store: AlertStore, queue: NotificationStore
) -> None:
    a = fire(alert_store, alert())
    assert queue.adopt([_kept(a.id, PENDING, T0)]) == 1
    [row] = queue.notifications(alert_id=a.id)
    assert row.id > 0 and (row.state, row.attempts, row.last_error, row.payload) == (
        PENDING,
        1,
        "timeout",
        {"n": 1},
    )
    assert queue.next_due() == T0 + 5
    assert queue.told([a.id, "other"]) == {("hook", a.id)}
    assert queue.delivered_firing("hook") == []  # pending still
    queue.record([Outcome(row.id, DELIVERED, T0 + 6)])
    assert queue.next_due() is None
    assert [x.id for x in queue.delivered_firing("hook")] == [a.id]
    assert queue.due(T0 + 100) == []
