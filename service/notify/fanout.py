"""Fan-out (pure): alert changes -> queue rows, one per receiver that should hear of them.

Rules, per receiver and alert:

* ``fired`` is ``firing``; ``repeated``/``reclassified``/``changed``/``acked``/``snapshot`` are
  ``updated``; ``resolved`` is ``resolved``; other transitions are not notified.
* ``firing``/``updated`` go to receivers whose kind/severity filters accept the alert. If an active silence
  matches, the row is recorded as ``silenced`` and never sent. A receiver not yet told the alert is
  firing (no non-silenced ``firing`` row) gets ``firing`` instead of ``updated``.
* ``resolved`` goes to every receiver that was told the alert is firing, silenced or filtered now or
  not: no receiver is left with an incident that never closes.
* A transition notified from memory when it happened (the store refused writes then) is passed over.
* Catch-up: a firing alert that a receiver accepts, is not silenced now and was never told about is
  queued as ``firing``. This notifies alerts whose silence ended (or was deleted) while they still fire,
  alerts that escalated into a receiver's filter, and alerts that fired before a receiver was added.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from service.notify.payloads import alertmanager_alert, webhook_payload
from service.notify.silencing import silenced_by
from service.settings import AlertmanagerReceiverSettings, WebhookReceiverSettings
from store.alert_records import Alert
from store.notification_records import (
    FIRING_EVENT,
    RESOLVED_EVENT,
    SILENCED,
    UPDATED_EVENT,
    Change,
    NewNotification,
    Silence,
)

ReceiverSettings = WebhookReceiverSettings | AlertmanagerReceiverSettings
Told = set[tuple[str, str]]  # (receiver, alert id): a non-silenced firing row exists

TRANSITION_EVENTS = {
    "fired": FIRING_EVENT,
    "repeated": UPDATED_EVENT,
    "reclassified": UPDATED_EVENT,
    "changed": UPDATED_EVENT,
    "acked": UPDATED_EVENT,
    "snapshot": UPDATED_EVENT,
    "resolved": RESOLVED_EVENT,
}


@dataclass(frozen=True, slots=True)
class FanOut:
    """The receivers and link settings; call it with what the store read under its write lock."""

    receivers: Sequence[ReceiverSettings]
    runbook_base: str | None = None
    external_url: str | None = None

    def __call__(
        self,
        changes: Iterable[Change],
        firing: Iterable[Alert],
        told: Told,
        silences: Sequence[Silence],
        now: float,
    ) -> list[NewNotification]:
        """Rows for ``changes`` (oldest first), then the catch-up of ``firing``; ``told`` is updated."""
        rows: list[NewNotification] = []
        for change in changes:
            event = TRANSITION_EVENTS.get(change.transition)
            if event is None or change.notified:  # notified from memory when it happened
                continue
            alert = replace(change.alert, severity=change.severity, cause=change.cause)
            for receiver in self.receivers:
                row = self._row(receiver, alert, event, change, told, silences, now)
                if row is not None:
                    rows.append(row)
        for alert in firing:
            for receiver in self.receivers:
                key = (receiver.name, alert.id)
                if key in told or not receiver.accepts(alert.kind, alert.severity):
                    continue
                if silenced_by(silences, alert, now) is None:
                    told.add(key)
                    rows.append(self._new(receiver, alert, FIRING_EVENT, None))
        return rows

    def _row(
        self,
        receiver: ReceiverSettings,
        alert: Alert,
        event: str,
        change: Change,
        told: Told,
        silences: Sequence[Silence],
        now: float,
    ) -> NewNotification | None:
        key = (receiver.name, alert.id)
        if event == RESOLVED_EVENT:
            return self._new(receiver, alert, event, change) if key in told else None
        if not receiver.accepts(alert.kind, alert.severity):
            return None
        silence = silenced_by(silences, alert, now)
        if silence is not None:
            row = self._new(receiver, alert, event, change)
            return replace(row, state=SILENCED, silence_id=silence.id)
        if key not in told:
            told.add(key)
            event = FIRING_EVENT
        return self._new(receiver, alert, event, change)

    def _new(
        self, receiver: ReceiverSettings, alert: Alert, event: str, change: Change | None
    ) -> NewNotification:
        transition = None if change is None else change.transition
        payload: dict[str, Any]
        if receiver.type == "alertmanager":
            payload = alertmanager_alert(
                alert, event, runbook_base=self.runbook_base, external_url=self.external_url
            )
        else:
            payload = webhook_payload(
                alert,
                event,
                transition=transition,
                runbook_base=self.runbook_base,
                external_url=self.external_url,
            )
        return NewNotification(
            receiver.name,
            alert.id,
            event,
            payload,
            transition_seq=None if change is None else change.seq,
        )
