"""SQL for the notification queue and silences: rows to and from SQLite, inside the caller's transaction."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from store.alert_records import FIRING, Alert
from store.alert_rows import COLUMNS, alert_from_row
from store.db import Connection
from store.json_text import sorted_compact
from store.notification_records import (
    ABANDONED,
    DELIVERED,
    FIRING_EVENT,
    NOTIFIED_FROM_MEMORY,
    PENDING,
    SILENCED,
    Change,
    Matcher,
    NewNotification,
    Notification,
    Outcome,
    Silence,
)

QUEUE_COLUMNS = (
    "id, receiver, alert_id, event, payload, state, created_at, attempts, next_attempt_at, delivered_at,"
    " last_error, transition_seq, silence_id"
)
SILENCE_COLUMNS = "id, matchers, starts_at, ends_at, comment, created_by, created_at, updated_at"
CHUNK = 500  # ids per IN (...): well under SQLite's bound-parameter limit


def _notification(row: Sequence[Any]) -> Notification:
    return Notification(
        id=row[0],
        receiver=row[1],
        alert_id=row[2],
        event=row[3],
        payload=json.loads(row[4]),
        state=row[5],
        created_at=row[6],
        attempts=row[7],
        next_attempt_at=row[8],
        delivered_at=row[9],
        last_error=row[10],
        transition_seq=row[11],
        silence_id=row[12],
    )


def progress(conn: Connection) -> int:
    return int(conn.execute("SELECT transition_seq FROM notify_progress WHERE id = 1").fetchone()[0])


def set_progress(conn: Connection, seq: int) -> None:
    conn.execute("UPDATE notify_progress SET transition_seq = ? WHERE id = 1", (seq,))


def changes_after(conn: Connection, seq: int, limit: int) -> list[Change]:
    """Transitions after ``seq``, oldest first, each with its alert as stored now."""
    alert_columns = ", ".join(f"a.{c.strip()}" for c in COLUMNS.split(","))
    rows = conn.execute(
        f"SELECT t.seq, t.transition, t.at, t.severity, t.cause,"
        f" {conn.dialect.json_text('t.detail', NOTIFIED_FROM_MEMORY)} IS NOT NULL, {alert_columns}"
        " FROM alert_transitions t JOIN alerts a ON a.id = t.alert_id"
        " WHERE t.seq > ? ORDER BY t.seq LIMIT ?",
        (seq, limit),
    ).fetchall()
    return [Change(r[0], r[1], r[2], r[3], r[4], alert_from_row(r[6:]), bool(r[5])) for r in rows]


def last_transition(conn: Connection) -> int:
    return int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM alert_transitions").fetchone()[0])


def firing_alerts(conn: Connection) -> list[Alert]:
    rows = conn.execute(f"SELECT {COLUMNS} FROM alerts WHERE status = ? ORDER BY seq", (FIRING,))
    return [alert_from_row(r) for r in rows.fetchall()]


def told(conn: Connection, alert_ids: Iterable[str]) -> set[tuple[str, str]]:
    """(receiver, alert id) pairs with a firing row that was not silenced, for ``alert_ids``."""
    ids = sorted(set(alert_ids))
    found: set[tuple[str, str]] = set()
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        rows = conn.execute(
            "SELECT DISTINCT receiver, alert_id FROM notifications WHERE event = ? AND state != ?"
            f" AND alert_id IN ({', '.join('?' * len(chunk))})",
            (FIRING_EVENT, SILENCED, *chunk),
        ).fetchall()
        found.update((r[0], r[1]) for r in rows)
    return found


def insert(conn: Connection, rows: Iterable[NewNotification], now: float) -> int:
    values = [
        (
            r.receiver,
            r.alert_id,
            r.event,
            r.transition_seq,
            sorted_compact(r.payload),
            r.state,
            r.silence_id,
            now,
            now if r.state == PENDING else None,
        )
        for r in rows
    ]
    conn.executemany(
        "INSERT INTO notifications (receiver, alert_id, event, transition_seq, payload, state, silence_id,"
        " created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        values,
    )
    return len(values)


def due(conn: Connection, now: float, limit: int) -> list[Notification]:
    """Pending rows due at ``now``, oldest first; a row waits while an older pending row of the same
    receiver and alert is not due yet, so a receiver never gets ``resolved`` before ``firing``."""
    rows = conn.execute(
        f"SELECT {QUEUE_COLUMNS} FROM notifications n"
        " WHERE n.state = ? AND n.next_attempt_at <= ?"
        " AND NOT EXISTS (SELECT 1 FROM notifications e WHERE e.alert_id = n.alert_id"
        "   AND e.receiver = n.receiver AND e.state = ? AND e.id < n.id AND e.next_attempt_at > ?)"
        " ORDER BY n.id LIMIT ?",
        (PENDING, now, PENDING, now, limit),
    ).fetchall()
    return [_notification(r) for r in rows]


def adopt(conn: Connection, rows: Iterable[Notification]) -> int:
    """Insert rows queued in memory while the store refused writes, as they stand (their ids are new)."""
    values = [
        (
            r.receiver,
            r.alert_id,
            r.event,
            sorted_compact(r.payload),
            r.state,
            r.silence_id,
            r.created_at,
            r.attempts,
            r.next_attempt_at if r.state == PENDING else None,
            r.delivered_at,
            r.last_error,
        )
        for r in rows
    ]
    conn.executemany(
        "INSERT INTO notifications (receiver, alert_id, event, payload, state, silence_id, created_at,"
        " attempts, next_attempt_at, delivered_at, last_error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        values,
    )
    return len(values)


def record(conn: Connection, outcomes: Iterable[Outcome]) -> None:
    for o in outcomes:
        conn.execute(
            "UPDATE notifications SET state = ?, attempts = attempts + 1, next_attempt_at = ?,"
            " delivered_at = ?, last_error = COALESCE(?, last_error) WHERE id = ? AND state = ?",
            (
                o.state,
                o.next_attempt_at if o.state == PENDING else None,
                o.at if o.state == DELIVERED else None,
                o.error,
                o.id,
                PENDING,
            ),
        )


def next_due(conn: Connection) -> float | None:
    row = conn.execute(
        "SELECT MIN(next_attempt_at) FROM notifications WHERE state = ?", (PENDING,)
    ).fetchone()
    return None if row[0] is None else float(row[0])


def delivered_firing(conn: Connection, receiver: str) -> list[Alert]:
    """Firing alerts whose ``firing`` reached ``receiver`` and that have nothing pending for it."""
    alert_columns = ", ".join(f"a.{c.strip()}" for c in COLUMNS.split(","))
    rows = conn.execute(
        f"SELECT {alert_columns} FROM alerts a WHERE a.status = ?"
        " AND EXISTS (SELECT 1 FROM notifications n WHERE n.alert_id = a.id AND n.receiver = ?"
        "   AND n.event = ? AND n.state = ?)"
        " AND NOT EXISTS (SELECT 1 FROM notifications p WHERE p.alert_id = a.id AND p.receiver = ?"
        "   AND p.state = ?)"
        " ORDER BY a.seq",
        (FIRING, receiver, FIRING_EVENT, DELIVERED, receiver, PENDING),
    ).fetchall()
    return [alert_from_row(r) for r in rows]


def prune(conn: Connection, before: float) -> int:
    """Delete finished rows older than ``before``, except the ``firing`` row of an alert still firing (it
    is what says the receiver was told; without it the catch-up would notify the alert again)."""
    cur = conn.execute(
        "DELETE FROM notifications WHERE state IN (?, ?, ?) AND COALESCE(delivered_at, created_at) < ?"
        " AND NOT (event = ? AND state != ? AND alert_id IN (SELECT id FROM alerts WHERE status = ?))",
        (DELIVERED, SILENCED, ABANDONED, before, FIRING_EVENT, SILENCED, FIRING),
    )
    return cur.rowcount


def select(
    conn: Connection, alert_id: str | None, receiver: str | None, state: str | None
) -> list[Notification]:
    where: list[str] = []
    args: list[Any] = []
    for column, value in (("alert_id", alert_id), ("receiver", receiver), ("state", state)):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    rows = conn.execute(f"SELECT {QUEUE_COLUMNS} FROM notifications {clause} ORDER BY id", args)
    return [_notification(r) for r in rows.fetchall()]


# ---------------------------------------------------------------------- silences


def _silence(row: Sequence[Any]) -> Silence:
    matchers = tuple(Matcher(m["name"], m["op"], m["value"]) for m in json.loads(row[1]))
    return Silence(row[0], matchers, row[2], row[3], row[4], row[5], row[6], row[7])


def insert_silence(conn: Connection, s: Silence) -> None:
    conn.execute(
        f"INSERT INTO silences ({SILENCE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            s.id,
            json.dumps([m.as_dict() for m in s.matchers], separators=(",", ":")),
            s.starts_at,
            s.ends_at,
            s.comment,
            s.created_by,
            s.created_at,
            s.updated_at,
        ),
    )


def silence(conn: Connection, silence_id: str) -> Silence | None:
    row = conn.execute(f"SELECT {SILENCE_COLUMNS} FROM silences WHERE id = ?", (silence_id,)).fetchone()
    return None if row is None else _silence(row)


def silences(conn: Connection, *, ending_after: float | None = None) -> list[Silence]:
    """All silences (or those ending after ``ending_after``), newest first."""
    if ending_after is None:
        rows = conn.execute(f"SELECT {SILENCE_COLUMNS} FROM silences ORDER BY created_at DESC, id")
    else:
        rows = conn.execute(
            f"SELECT {SILENCE_COLUMNS} FROM silences WHERE ends_at > ? ORDER BY created_at DESC, id",
            (ending_after,),
        )
    return [_silence(r) for r in rows.fetchall()]


def pending_among(conn: Any, ids: Sequence[int]) -> set[int]:
    """Those of ``ids`` still pending: the fenced claim before a send (issue 46, a guarded write transaction
    of :meth:`store.notifications.NotificationStore.claim`)."""
    if not ids:
        return set()
    marks = ", ".join("?" * len(ids))
    sql = f"SELECT id FROM notifications WHERE state = ? AND id IN ({marks})"
    return {int(r[0]) for r in conn.execute(sql, (PENDING, *ids)).fetchall()}


def expire_silence(conn: Connection, silence_id: str, now: float) -> Silence | None:
    """End the silence at ``now`` (no-op if it ended already); None if there is no such silence."""
    conn.execute(
        # A silence that has not started yet starts and ends now, so that it reads as expired.
        f"UPDATE silences SET starts_at = {conn.dialect.least('starts_at', '?')}, ends_at = ?, updated_at = ?"
        " WHERE id = ? AND ends_at > ?",
        (now, now, now, silence_id, now),
    )
    return silence(conn, silence_id)
