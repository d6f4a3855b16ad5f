"""What the store keeps of notifications and silences: queue rows (:class:`Notification`), rows to add
(:class:`NewNotification`), the alert changes they come from (:class:`Change`) and :class:`Silence`.

A notification is one event (``firing``, ``updated``, ``resolved``) of one alert for one receiver. Its
``state`` is ``pending`` until delivered, ``silenced`` (recorded, never sent) or ``abandoned`` (retries
given up, or refused by the receiver).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from store.alert_records import Alert

FIRING_EVENT = "firing"
UPDATED_EVENT = "updated"
RESOLVED_EVENT = "resolved"

PENDING = "pending"
DELIVERED = "delivered"
SILENCED = "silenced"
ABANDONED = "abandoned"

# A transition's detail key: notified from memory when it happened, while the store refused writes
# (service.detection.backlog); the fan-out passes over it.
NOTIFIED_FROM_MEMORY = "notified_from_memory"

MATCHER_NAMES = ("kind", "cluster", "group", "topic")
MATCHER_OPS = ("=", "!=", "=~", "!~")


@dataclass(frozen=True, slots=True)
class Change:
    """One alert transition not yet fanned out, with the alert as it is stored now."""

    seq: int
    transition: str
    at: float
    severity: str
    cause: str | None
    alert: Alert
    # notified from memory when it happened (the store refused it then: service.detection.backlog)
    notified: bool = False


@dataclass(frozen=True, slots=True)
class NewNotification:
    """A row to add to the queue (``state`` pending or silenced)."""

    receiver: str
    alert_id: str
    event: str
    payload: Mapping[str, Any]
    state: str = PENDING
    transition_seq: int | None = None
    silence_id: str | None = None


@dataclass(frozen=True, slots=True)
class Notification:
    """One queue row."""

    id: int
    receiver: str
    alert_id: str
    event: str
    payload: Mapping[str, Any]
    state: str
    created_at: float
    attempts: int
    next_attempt_at: float | None
    delivered_at: float | None = None
    last_error: str | None = None
    transition_seq: int | None = None
    silence_id: str | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one delivery attempt of notification ``id`` came to: ``state`` delivered, pending (retry at
    ``next_attempt_at``) or abandoned."""

    id: int
    state: str
    at: float
    next_attempt_at: float | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Matcher:
    """``name op value`` like Alertmanager's: ``=``/``!=`` exact, ``=~``/``!~`` a fully anchored regex.
    A missing label (an alert without a group) matches as the empty string."""

    name: str
    op: str
    value: str

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "op": self.op, "value": self.value}


@dataclass(frozen=True, slots=True)
class Silence:
    """Alerts matching every matcher are not notified from ``starts_at`` until ``ends_at``."""

    id: str
    matchers: tuple[Matcher, ...]
    starts_at: float
    ends_at: float
    comment: str
    created_by: str
    created_at: float
    updated_at: float

    def status(self, now: float) -> str:
        """``pending`` (not started), ``active`` or ``expired``."""
        if now < self.starts_at:
            return "pending"
        return "active" if now < self.ends_at else "expired"
