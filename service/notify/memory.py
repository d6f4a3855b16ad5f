"""The :class:`MemoryQueue`: notifications of alert changes the store could not take, delivered from memory.

While the disk refuses writes the detection loop keeps its alert writes (:mod:`service.detection.backlog`)
and hands their transitions to the dispatcher, which fans them out here. Rows are delivered from here
with the same backoff as stored ones, and stored as they stand (delivered, pending, abandoned) once the
store takes writes again: a pending one is then delivered from the store, a delivered one is never sent
again (the transitions written later are marked notified, and the fan-out passes over them). Unbounded on
purpose: a row is an alert change times a receiver, and none may be dropped; a crash loses them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import replace

from store.notification_records import (
    DELIVERED,
    FIRING_EVENT,
    PENDING,
    SILENCED,
    NewNotification,
    Notification,
    Outcome,
)


class MemoryQueue:
    """Rows with negative ids (a stored row's id is positive), oldest first. The id is what a receiver
    gets as ``notification_id`` and may drop repeats by: they start at minus the microseconds since the
    epoch and count down, so no id repeats across failure spells or restarts (nor meets a stored one)."""

    def __init__(self, first_id: int | None = None) -> None:
        self._rows: dict[int, Notification] = {}
        self._next = first_id if first_id is not None else -(time.time_ns() // 1000)

    def __len__(self) -> int:
        return len(self._rows)

    def add(self, rows: Iterable[NewNotification], now: float) -> int:
        added = 0
        for r in rows:
            pending = r.state == PENDING
            self._rows[self._next] = Notification(
                self._next, r.receiver, r.alert_id, r.event, r.payload, r.state, now, 0,
                now if pending else None, silence_id=r.silence_id,
            )  # fmt: skip
            self._next -= 1
            added += 1
        return added

    def told(self) -> set[tuple[str, str]]:
        """(receiver, alert id) pairs with a firing row here that was not silenced."""
        rows = self._rows.values()
        return {(n.receiver, n.alert_id) for n in rows if n.event == FIRING_EVENT and n.state != SILENCED}

    def due(self, now: float) -> list[Notification]:
        """Pending rows due at ``now``, oldest first; a row waits behind an older pending row of its receiver
        and alert (``resolved`` never before ``firing``)."""
        waiting: set[tuple[str, str]] = set()
        out: list[Notification] = []
        for n in self._rows.values():
            if n.state != PENDING:
                continue
            key = (n.receiver, n.alert_id)
            if key in waiting:
                continue
            if n.next_attempt_at is not None and n.next_attempt_at > now:
                waiting.add(key)
                continue
            out.append(n)
        return out

    def next_due(self) -> float | None:
        times = [n.next_attempt_at for n in self._rows.values() if n.state == PENDING and n.next_attempt_at]
        return min(times) if times else None

    def record(self, outcomes: Iterable[Outcome]) -> None:
        """Delivery outcomes of rows here (others are ignored)."""
        for o in outcomes:
            n = self._rows.get(o.id)
            if n is None or n.state != PENDING:
                continue
            self._rows[o.id] = replace(
                n,
                state=o.state,
                attempts=n.attempts + 1,
                next_attempt_at=o.next_attempt_at if o.state == PENDING else None,
                delivered_at=o.at if o.state == DELIVERED else None,
                last_error=o.error if o.error is not None else n.last_error,
            )

    def rows(self) -> Sequence[Notification]:
        """Every row, oldest first."""
        return tuple(self._rows.values())

    def forget(self, rows: Iterable[Notification]) -> None:
        """Rows now stored."""
        for n in rows:
            self._rows.pop(n.id, None)
