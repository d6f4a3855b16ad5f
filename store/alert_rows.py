"""SQL for the alert tables: :class:`Alert` rows to and from SQLite, history, filters and the list cursor."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from collectors.errors import StoreError
from store.alert_records import (
    EVENT_LIKE_KINDS,
    FIRING,
    RESOLVED,
    Alert,
    AlertPage,
    AlertWrite,
    Fingerprint,
    Transition,
    changed,
    fingerprint_text,
)
from store.db import Connection
from store.json_text import sorted_compact as _json

COLUMNS = (
    "seq, id, kind, severity, status, cluster, grp, topic, partition, started_at, updated_at, resolved_at,"
    " resolved_reason, summary, cause, magnitude, magnitude_total, evidence, occurrence, occurrences,"
    " snapshot_id, ack_by, ack_comment, acked_at"
)
MUTABLE = (
    "severity", "status", "updated_at", "resolved_at", "resolved_reason", "summary", "cause", "magnitude",
    "magnitude_total", "evidence", "occurrence", "occurrences", "snapshot_id", "ack_by", "ack_comment",
    "acked_at",
)  # fmt: skip


def _values(a: Alert) -> dict[str, Any]:
    return {
        "severity": a.severity,
        "status": a.status,
        "updated_at": a.updated_at,
        "resolved_at": a.resolved_at,
        "resolved_reason": a.resolved_reason,
        "summary": a.summary,
        "cause": a.cause,
        "magnitude": _json(a.magnitude),
        "magnitude_total": _json(a.magnitude_total),
        "evidence": _json(a.evidence),
        "occurrence": a.occurrence,
        "occurrences": a.occurrences,
        "snapshot_id": a.snapshot_id,
        "ack_by": a.ack_by,
        "ack_comment": a.ack_comment,
        "acked_at": a.acked_at,
    }


def alert_from_row(row: Sequence[Any]) -> Alert:
    return Alert(
        seq=row[0],
        id=row[1],
        kind=row[2],
        severity=row[3],
        status=row[4],
        cluster=row[5],
        group=row[6],
        topic=row[7],
        partition=row[8],
        started_at=row[9],
        updated_at=row[10],
        resolved_at=row[11],
        resolved_reason=row[12],
        summary=row[13],
        cause=row[14],
        magnitude=json.loads(row[15]),
        magnitude_total=json.loads(row[16]),
        evidence=json.loads(row[17]),
        occurrence=row[18],
        occurrences=row[19],
        snapshot_id=row[20],
        ack_by=row[21],
        ack_comment=row[22],
        acked_at=row[23],
    )


def write(conn: Connection, w: AlertWrite, at: float, transitions: list[Transition] | None = None) -> Alert:
    """Apply one planned change inside the caller's transaction; the alert as stored. Its transition is
    written too, or appended to ``transitions`` for the caller to write with :func:`add_transitions`."""
    a = w.alert
    values = _values(a)
    if w.insert:
        cur = conn.execute(
            f"INSERT INTO alerts (id, fingerprint, kind, cluster, grp, topic, partition, started_at,"
            f" {', '.join(MUTABLE)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, {', '.join('?' * len(MUTABLE))})"
            " RETURNING seq",
            (
                a.id,
                fingerprint_text(a.fingerprint),
                a.kind,
                a.cluster,
                a.group,
                a.topic,
                a.partition,
                a.started_at,
                *values.values(),
            ),
        )
        seq = cur.fetchone()[0]
    else:
        cur = conn.execute(
            f"UPDATE alerts SET {', '.join(f'{c} = ?' for c in MUTABLE)} WHERE id = ? RETURNING seq",
            (*values.values(), a.id),
        )
        found = cur.fetchone()
        if found is None:
            raise StoreError(f"alert {a.id} does not exist", cluster=a.cluster)
        seq = found[0]
    if w.transition is not None:
        t = Transition(a.id, at, w.transition, a.severity, a.cause, w.detail)
        if transitions is None:
            add_transition(conn, t)
        else:
            transitions.append(t)
    return changed(a, seq=seq)


# What a silent rewrite changes (service.detection.lifecycle: a state-like alert's refresh, or an
# event-like occurrence reported again with its cause and severity unchanged, whose total moves); the
# rest of the row (severity, cause, occurrence, the ack and snapshot fields, the status and its index
# entries) is left as stored.
_REFRESHED = ("updated_at", "summary", "magnitude", "magnitude_total", "evidence")


def is_refresh(w: AlertWrite) -> bool:
    """A silent rewrite of a firing row (a state-like alert's new magnitude): :func:`refresh` can take it."""
    return not w.insert and w.transition is None and w.alert.status == FIRING and w.alert.seq is not None


def refresh(conn: Connection, alerts: Sequence[Alert]) -> None:
    """Silent rewrites of firing rows (see :func:`is_refresh`) in one statement, of the columns a refresh
    changes: a fleet's thousands of firing alerts are refreshed together. Each stored alert keeps its
    ``seq``; raises ``StoreError`` if one is no longer a firing row."""
    if not alerts:
        return
    rows = []
    for a in alerts:
        magnitude = _json(a.magnitude)
        total = magnitude if a.magnitude_total == a.magnitude else _json(a.magnitude_total)
        rows.append((a.updated_at, a.summary, magnitude, total, _json(a.evidence), a.id))
    sets = ", ".join(f"{c} = ?" for c in _REFRESHED)
    cur = conn.executemany(f"UPDATE alerts SET {sets} WHERE id = ? AND status = '{FIRING}'", rows)
    if cur.rowcount != len(alerts):
        missing = len(alerts) - cur.rowcount
        raise StoreError(f"{missing} of {len(alerts)} refreshed alerts are not firing rows")


_INSERT_TRANSITION = (
    "INSERT INTO alert_transitions (alert_id, at, transition, severity, cause, detail)"
    " VALUES (?, ?, ?, ?, ?, ?)"
)


def add_transition(conn: Connection, t: Transition) -> None:
    conn.execute(_INSERT_TRANSITION, (t.alert_id, t.at, t.transition, t.severity, t.cause, _json(t.detail)))


def add_transitions(conn: Connection, ts: Sequence[Transition]) -> None:
    """Transitions in one statement, in order (a burst's thousands)."""
    if ts:
        rows = [(t.alert_id, t.at, t.transition, t.severity, t.cause, _json(t.detail)) for t in ts]
        conn.executemany(_INSERT_TRANSITION, rows)


def firing(conn: Connection, cluster: str) -> tuple[Alert, ...]:
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM alerts WHERE cluster = ? AND status = ? ORDER BY seq", (cluster, FIRING)
    ).fetchall()
    return tuple(alert_from_row(r) for r in rows)


def firing_of_groups(conn: Connection, cluster: str, groups: Sequence[str]) -> tuple[Alert, ...]:
    """The firing alerts of ``groups`` (a page of them: the rest of the cluster's are not decoded)."""
    if not groups:
        return ()
    marks = ", ".join("?" * len(groups))
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM alerts WHERE cluster = ? AND status = ? AND grp IN ({marks}) ORDER BY seq",
        (cluster, FIRING, *groups),
    ).fetchall()
    return tuple(alert_from_row(r) for r in rows)


def count_firing(conn: Connection, cluster: str) -> int:
    row = conn.execute(
        "SELECT COUNT(*) FROM alerts WHERE cluster = ? AND status = ?", (cluster, FIRING)
    ).fetchone()
    return int(row[0])


_EVENT_KINDS = tuple(sorted(EVENT_LIKE_KINDS))
RESOLVED_OCCURRENCES = (  # (cluster, RESOLVED, since, *_EVENT_KINDS): the alerts_resolved_by_cluster index
    "SELECT kind, cluster, grp, topic, partition, occurrence FROM alerts"
    " WHERE cluster = ? AND status = ? AND resolved_at >= ?"
    f" AND kind IN ({', '.join('?' * len(_EVENT_KINDS))})"
)


def resolved_occurrences(conn: Connection, cluster: str, since: float) -> frozenset[tuple[Fingerprint, str]]:
    """(fingerprint, occurrence) of the event-like alerts resolved at or after ``since``: the only kinds
    whose occurrence is compared (a storm of resolved lag alerts is not read every evaluation)."""
    rows = conn.execute(RESOLVED_OCCURRENCES, (cluster, RESOLVED, since, *_EVENT_KINDS)).fetchall()
    return frozenset(((r[0], r[1], r[2], r[3], r[4]), r[5]) for r in rows)


def one(conn: Connection, alert_id: str) -> Alert | None:
    row = conn.execute(f"SELECT {COLUMNS} FROM alerts WHERE id = ?", (alert_id,)).fetchone()
    return None if row is None else alert_from_row(row)


def transitions(conn: Connection, alert_id: str) -> tuple[Transition, ...]:
    rows = conn.execute(
        "SELECT seq, alert_id, at, transition, severity, cause, detail FROM alert_transitions"
        " WHERE alert_id = ? ORDER BY seq",
        (alert_id,),
    ).fetchall()
    return tuple(Transition(r[1], r[2], r[3], r[4], r[5], json.loads(r[6]), r[0]) for r in rows)


@dataclass(frozen=True, slots=True)
class Filters:
    """List filters; None = any. ``since``: alerts updated at or after it."""

    status: str | None = None
    kind: str | None = None
    severity: str | None = None
    cluster: str | None = None
    group: str | None = None
    topic: str | None = None
    since: float | None = None


def page(conn: Connection, filters: Filters, limit: int, cursor: str | None) -> AlertPage:
    """Newest first (by ``seq``); ``cursor`` is the ``seq`` of the last alert of the previous page."""
    where: list[str] = []
    args: list[Any] = []
    for column, value in (
        ("status", filters.status),
        ("kind", filters.kind),
        ("severity", filters.severity),
        ("cluster", filters.cluster),
        ("grp", filters.group),
        ("topic", filters.topic),
    ):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    if filters.since is not None:
        where.append("updated_at >= ?")
        args.append(filters.since)
    if cursor is not None:
        if not cursor.isdigit():
            raise StoreError(f"invalid alert cursor {cursor!r}")
        where.append("seq < ?")
        args.append(int(cursor))
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM alerts {clause} ORDER BY seq DESC LIMIT ?", (*args, limit + 1)
    ).fetchall()
    alerts = tuple(alert_from_row(r) for r in rows[:limit])
    more = len(rows) > limit and alerts
    return AlertPage(alerts, str(alerts[-1].seq) if more else None)
