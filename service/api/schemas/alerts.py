"""Alerts: one alert, a page of them, an alert with its history, and an acknowledgement request."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from store.alert_records import Alert, Transition
from store.notification_records import Notification


class AlertAck(BaseModel):
    by: str | None
    comment: str | None
    at: float


class AlertOut(BaseModel):
    """One alert: a firing episode of one (kind, cluster, group, topic, partition)."""

    id: str
    kind: str
    severity: str  # info, warning, critical
    status: str  # firing, resolved
    cluster: str
    group: str | None
    topic: str | None
    partition: int | None
    started_at: float
    updated_at: float
    resolved_at: float | None
    resolved_reason: str | None
    summary: str
    cause: str | None
    magnitude: dict[str, int | float | None]
    magnitude_total: dict[str, int | float | None]
    evidence: dict[str, Any]
    occurrences: int
    snapshot_id: str | None
    drill: bool  # caused by ``offsetguard drill`` (its own offsetguard-drill-* topic or group)
    ack: AlertAck | None
    runbook_url: str

    @classmethod
    def of(cls, alert: Alert, runbook_base_url: str) -> AlertOut:
        return cls(**alert.as_dict(), runbook_url=f"{runbook_base_url}/{alert.kind}.md")


class AlertPageOut(BaseModel):
    """Newest first; pass ``next_cursor`` as ``cursor`` for the next page (null: no more)."""

    alerts: list[AlertOut]
    next_cursor: str | None


class TransitionOut(BaseModel):
    at: float
    transition: str  # fired, repeated, reclassified, changed, snapshot, snapshot_failed, acked, resolved
    severity: str
    cause: str | None
    detail: dict[str, Any]

    @classmethod
    def of(cls, t: Transition) -> TransitionOut:
        return cls(
            at=t.at, transition=t.transition, severity=t.severity, cause=t.cause, detail=dict(t.detail)
        )


class NotificationOut(BaseModel):
    """One notification of the alert to one receiver (the queue row)."""

    receiver: str
    event: str  # firing, resolved, ...
    state: str  # pending, delivered, silenced, abandoned
    created_at: float
    attempts: int
    delivered_at: float | None
    last_error: str | None

    @classmethod
    def of(cls, n: Notification) -> NotificationOut:
        return cls(
            receiver=n.receiver,
            event=n.event,
            state=n.state,
            created_at=n.created_at,
            attempts=n.attempts,
            delivered_at=n.delivered_at,
            last_error=n.last_error,
        )


class AlertDetail(AlertOut):
    """One alert with its history and its notifications, oldest first (no notifications when notify is
    off)."""

    transitions: list[TransitionOut]
    notifications: list[NotificationOut] = []


class AckRequest(BaseModel):
    """Acknowledge an alert. ``who`` defaults to the name of the token used."""

    who: str | None = Field(default=None, min_length=1, max_length=200)
    comment: str = Field(default="", max_length=4000)
