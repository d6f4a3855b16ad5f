"""The write gate of one SQLite file: this process's writers take its write lock in arrival order.

SQLite lets one connection write at a time; a connection that finds the lock taken sleeps in its busy
handler and tries again (every 100 ms once it has waited a while), and gives up with "database is
locked" after ``busy_timeout``. A writer that commits and begins again at once (a long write split into
transactions so others get their turn, :meth:`store.alerts.AlertStore.update_firing`) would almost always
win that race against the sleepers. So every write transaction of the process on one file first takes
the file's :class:`WriteGate` (:func:`store.db.transaction`): a ticket queue, where a writer beginning
again queues behind those already waiting. Another process's writers (``offsetguard store`` commands)
still meet SQLite's busy handler. PostgreSQL queues the waiters of its advisory lock itself.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from store.per_file import PerFile


class WriteGate:
    """Tickets served in order; a waiter that gives up leaves its ticket, which is skipped."""

    def __init__(self) -> None:
        self._turn = threading.Condition(threading.Lock())
        self._next = 0  # the ticket the next writer draws
        self._serving = 0  # the ticket whose writer may hold the lock
        self._abandoned: set[int] = set()

    def acquire(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for this writer's turn; False (and no turn held) if it did not
        come."""
        with self._turn:
            ticket = self._next
            self._next += 1
            deadline = time.monotonic() + timeout
            while ticket != self._serving:
                left = deadline - time.monotonic()
                if left <= 0:
                    self._abandoned.add(ticket)
                    return False
                self._turn.wait(left)
            return True

    def release(self) -> None:
        """End the holder's turn: the next ticket still waiting gets it."""
        with self._turn:
            self._serving += 1
            while self._serving in self._abandoned:
                self._abandoned.discard(self._serving)
                self._serving += 1
            self._turn.notify_all()

    @property
    def waiting(self) -> int:
        """Writers waiting for their turn (the holder not counted)."""
        with self._turn:
            return max(0, self._next - self._serving - 1 - len(self._abandoned))


_GATES = PerFile(WriteGate)


def gate_for(path: Path) -> WriteGate:
    """The one gate of the file at ``path`` in this process (however the path is spelled)."""
    return _GATES.of(path)
