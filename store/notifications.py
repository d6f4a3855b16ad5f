"""The :class:`NotificationStore`: the notification queue and the silences, in the store's SQLite file.

Like :class:`~store.alerts.AlertStore` it has its own writer connection on the same database.
``alert_transitions`` is the outbox: the detection loop writes a transition in the same transaction as
the alert, and :meth:`NotificationStore.advance` turns transitions into queue rows in one transaction
that also moves ``notify_progress`` past them. A crash between the two leaves the transitions unconsumed,
so they are fanned out at the next start: nothing is lost and nothing is fanned out twice. Every method
blocks (call it from a worker thread in async code); failures raise :class:`collectors.errors.StoreError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple, TypeVar

import store.notify_rows as notify_rows
from store.alert_records import Alert
from store.db import Connection
from store.notification_records import Change, NewNotification, Notification, Outcome, Silence
from store.opening import open_migrated
from store.settings import StoreSettings
from store.writer import WriterConnection

T = TypeVar("T")

# (changes oldest first, firing alerts for the catch-up, told pairs, silences, now) -> rows to add
Planner = Callable[
    [Sequence[Change], Sequence[Alert], set[tuple[str, str]], Sequence[Silence], float],
    Sequence[NewNotification],
]


# (silences, now) -> whether this advance reads the firing alerts for the catch-up
CatchUpWanted = Callable[[Sequence[Silence], float], bool]


class Advanced(NamedTuple):
    """One :meth:`NotificationStore.advance`: rows added, transitions consumed, whether more are left,
    whether the firing alerts were caught up, transitions consumed without being fanned out (too old)."""

    added: int
    consumed: int
    more: bool
    caught_up: bool = False
    skipped: int = 0


class NotificationStore(WriterConnection):
    """Queue and silences persistence. Build with :meth:`open`; close with :meth:`close`."""

    def __init__(self, conn: Connection) -> None:
        super().__init__(conn, "notification store")

    @classmethod
    def open(cls, settings: StoreSettings) -> NotificationStore:
        """Open (creating and migrating as needed) the database at ``settings.path``."""
        conn = open_migrated(settings, "notification store")
        return cls(conn)

    # ------------------------------------------------------------------ queue

    def advance(
        self,
        plan: Planner,
        now: float,
        *,
        oldest: float | None = None,
        batch: int = 500,
        catch_up: CatchUpWanted | None = None,
    ) -> Advanced:
        """Fan out up to ``batch`` transitions not yet fanned out, in one transaction.

        Transitions older than ``oldest`` are consumed without notifications (a backlog past the retry
        give-up age would be abandoned anyway). When no transitions are left after this batch, ``plan``
        also gets the firing alerts for its catch-up, read under the same write lock, so a transition
        cannot slip in between: always if ``catch_up`` is None, else when it says so (given the silences
        read) or when this batch consumed transitions without fanning them out.
        """

        def work(conn: Connection) -> Advanced:
            changes = notify_rows.changes_after(conn, notify_rows.progress(conn), batch)
            more = len(changes) == batch
            wanted = [c for c in changes if oldest is None or c.at >= oldest]
            skipped = len(changes) - len(wanted)
            silences = notify_rows.silences(conn, ending_after=now)
            catching_up = not more and (catch_up is None or skipped > 0 or catch_up(silences, now))
            firing = notify_rows.firing_alerts(conn) if catching_up else []
            told = notify_rows.told(conn, [c.alert.id for c in wanted] + [a.id for a in firing])
            added = notify_rows.insert(conn, plan(wanted, firing, told, silences, now), now)
            if changes:
                notify_rows.set_progress(conn, changes[-1].seq)
            return Advanced(added, len(changes), more, catching_up, skipped)

        return self._run("queue notifications", work, write=True)

    def due(self, now: float, limit: int = 200) -> list[Notification]:
        """Pending rows due at ``now``, oldest first (see :func:`notify_rows.due` for the ordering)."""
        return self._run("read due notifications", lambda c: notify_rows.due(c, now, limit))

    def told(self, alert_ids: Iterable[str]) -> set[tuple[str, str]]:
        """(receiver, alert id) pairs told the alert fires (a firing row not silenced), of ``alert_ids``."""
        ids = list(alert_ids)
        return self._run("read notified alerts", lambda c: notify_rows.told(c, ids)) if ids else set()

    def adopt(self, rows: Sequence[Notification]) -> int:
        """Store rows queued in memory while the store refused writes, as they stand (one transaction)."""
        action = "store notifications kept in memory"
        return self._run(action, lambda c: notify_rows.adopt(c, rows), write=True)

    def record(self, outcomes: Iterable[Outcome]) -> None:
        """Store delivery outcomes (one transaction); rows no longer pending are left alone."""
        done = list(outcomes)
        if done:
            self._run("record deliveries", lambda c: notify_rows.record(c, done), write=True)

    def claim(self, ids: Sequence[int]) -> set[int]:
        """Those of ``ids`` still pending, read in a write transaction: under the fencing guard (issue 46),
        so only the replica holding the leader lease at its epoch gets them to send."""
        wanted = list(ids)
        return self._run("claim notifications", lambda c: notify_rows.pending_among(c, wanted), write=True)

    def next_due(self) -> float | None:
        """When the earliest pending row is due; None if nothing is pending."""
        return self._run("read next notification", notify_rows.next_due)

    def delivered_firing(self, receiver: str) -> list[Alert]:
        """Firing alerts ``receiver`` was told about, with nothing pending for it (Alertmanager re-posts)."""
        return self._run("read notified alerts", lambda c: notify_rows.delivered_firing(c, receiver))

    def prune(self, before: float) -> int:
        """Delete delivered, silenced and abandoned rows older than ``before``; how many went."""
        return self._run("prune notifications", lambda c: notify_rows.prune(c, before), write=True)

    def notifications(
        self, *, alert_id: str | None = None, receiver: str | None = None, state: str | None = None
    ) -> list[Notification]:
        """Queue rows matching every given filter, oldest first."""
        return self._run("list notifications", lambda c: notify_rows.select(c, alert_id, receiver, state))

    # ------------------------------------------------------------------ silences

    def add_silence(self, silence: Silence) -> Silence:
        self._run("add silence", lambda c: notify_rows.insert_silence(c, silence), write=True)
        return silence

    def silence(self, silence_id: str) -> Silence | None:
        return self._run("read silence", lambda c: notify_rows.silence(c, silence_id))

    def silences(self, *, ending_after: float | None = None) -> list[Silence]:
        """Every silence (or those ending after ``ending_after``), newest first."""
        return self._run("list silences", lambda c: notify_rows.silences(c, ending_after=ending_after))

    def expire_silence(self, silence_id: str, now: float) -> Silence | None:
        """End a silence now (already ended: unchanged); None if there is no such silence."""
        return self._run(
            "expire silence", lambda c: notify_rows.expire_silence(c, silence_id, now), write=True
        )
