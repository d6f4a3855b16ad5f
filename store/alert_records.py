"""What the store keeps of alerts: :class:`Alert` rows, their :class:`Transition` history, and one
planned change (:class:`AlertWrite`).

An alert is one firing episode of one fingerprint ``(kind, cluster, group, topic, partition)``. Event-like
kinds describe something that happened (a rewind) and stay firing until acknowledged or quiet for a
while; state-like kinds describe a condition (lag) and resolve when it clears.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from alerts.model import (
    LOG_TRUNCATION,
    OFFSET_REWIND,
    OFFSET_SKIP,
    OFFSETS_LOST,
    TOPIC_DELETED,
    UNCLEAN_LEADER_ELECTION,
)
from store.dialect import Dialect

FIRING = "firing"
RESOLVED = "resolved"

EVENT_LIKE_KINDS = frozenset(
    {OFFSET_REWIND, OFFSET_SKIP, LOG_TRUNCATION, UNCLEAN_LEADER_ELECTION, OFFSETS_LOST, TOPIC_DELETED}
)

Fingerprint = tuple[str, str, str | None, str | None, int | None]
# Topics and groups an ``offsetguard drill`` creates (and only those) carry this prefix: their alerts are
# drills, told apart in the API, the notifications and the metrics.
DRILL_PREFIX = "offsetguard-drill-"
# An alerts row that is no drill (:func:`is_drill` in SQL: case-sensitive, as the prefix test), in SQLite's
# words; :func:`not_drill_sql` for either backend.
NOT_DRILL_SQL = (
    f"NOT (COALESCE(grp, '') GLOB '{DRILL_PREFIX}*' OR COALESCE(topic, '') GLOB '{DRILL_PREFIX}*')"
)


def not_drill_sql(dialect: Dialect) -> str:
    """:data:`NOT_DRILL_SQL` in ``dialect``'s words."""
    grp = dialect.starts_with("COALESCE(grp, '')", DRILL_PREFIX)
    topic = dialect.starts_with("COALESCE(topic, '')", DRILL_PREFIX)
    return f"NOT ({grp} OR {topic})"


Numbers = Mapping[str, int | float | None]


def is_drill(group: str | None, topic: str | None) -> bool:
    """An alert about a drill's own group or topic (see :data:`DRILL_PREFIX`)."""
    return any(name is not None and name.startswith(DRILL_PREFIX) for name in (group, topic))


def is_event_like(kind: str) -> bool:
    return kind in EVENT_LIKE_KINDS


def fingerprint_text(fp: Fingerprint) -> str:
    """The fingerprint as stored (and uniquely indexed while firing)."""
    return json.dumps(list(fp), separators=(",", ":"))


@dataclass(frozen=True)
class Alert:
    """One alert as stored. ``magnitude`` is the latest occurrence's; ``magnitude_total`` sums the numeric
    fields over distinct occurrences for event-like kinds (a bound ``X_max`` with the exact ``X`` of the
    occurrences that had none) and equals ``magnitude`` for state-like ones."""

    id: str
    kind: str
    severity: str
    status: str
    cluster: str
    group: str | None
    topic: str | None
    partition: int | None
    started_at: float
    updated_at: float
    summary: str
    cause: str | None
    magnitude: Numbers
    magnitude_total: Numbers
    evidence: Mapping[str, Any]
    occurrence: str  # identity of the latest occurrence: the same one re-reported is not counted again
    occurrences: int
    resolved_at: float | None = None
    resolved_reason: str | None = None  # acknowledged, quiet_period, cleared
    snapshot_id: str | None = None
    ack_by: str | None = None
    ack_comment: str | None = None
    acked_at: float | None = None
    seq: int | None = None  # assigned by the store; orders alerts (the list cursor)

    @property
    def fingerprint(self) -> Fingerprint:
        return (self.kind, self.cluster, self.group, self.topic, self.partition)

    @property
    def firing(self) -> bool:
        return self.status == FIRING

    @property
    def drill(self) -> bool:
        """Caused by ``offsetguard drill`` (on the drill's own topic or group)."""
        return is_drill(self.group, self.topic)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form for the HTTP layer."""
        return {
            "id": self.id,
            "kind": self.kind,
            "severity": self.severity,
            "status": self.status,
            "cluster": self.cluster,
            "group": self.group,
            "topic": self.topic,
            "partition": self.partition,
            "started_at": self.started_at,
            "updated_at": self.updated_at,
            "resolved_at": self.resolved_at,
            "resolved_reason": self.resolved_reason,
            "summary": self.summary,
            "cause": self.cause,
            "magnitude": dict(self.magnitude),
            "magnitude_total": dict(self.magnitude_total),
            "evidence": dict(self.evidence),
            "occurrences": self.occurrences,
            "snapshot_id": self.snapshot_id,
            "drill": self.drill,
            "ack": None
            if self.acked_at is None
            else {"by": self.ack_by, "comment": self.ack_comment, "at": self.acked_at},
        }


def changed(alert: Alert, **changes: Any) -> Alert:
    """``dataclasses.replace(alert, **changes)`` at a quarter of its cost, for the paths that copy every
    firing alert (a fleet's thousands of lag alerts refreshed together): the fields are copied as they
    are instead of passed through ``__init__`` again (which checks nothing). Field names only."""
    unknown = changes.keys() - _ALERT_FIELDS
    if unknown:
        raise TypeError(f"Alert has no field {sorted(unknown)}")
    new = object.__new__(Alert)
    new.__dict__.update(alert.__dict__, **changes)
    return new


_ALERT_FIELDS = frozenset(f.name for f in fields(Alert))


@dataclass(frozen=True, slots=True)
class Transition:
    """One step in an alert's history."""

    alert_id: str
    at: float
    transition: str  # fired, repeated, reclassified, changed, snapshot, snapshot_failed, acked, resolved
    severity: str
    cause: str | None
    detail: Mapping[str, Any] = field(default_factory=dict)
    seq: int | None = None


@dataclass(frozen=True, slots=True)
class AlertWrite:
    """One planned change: insert ``alert`` (``insert=True``) or overwrite the firing row with its id.

    ``transition`` (None: a silent refresh, e.g. a state-like alert's new magnitude) is appended to the
    history in the same transaction.
    """

    alert: Alert
    insert: bool
    transition: str | None
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AlertPage:
    """One page of :meth:`AlertStore.list`, newest first; pass ``next_cursor`` for the next page."""

    alerts: tuple[Alert, ...]
    next_cursor: str | None
