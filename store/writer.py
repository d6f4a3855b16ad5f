"""The writer-connection handling the store classes share: one lock, one connection, translated errors."""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType
from typing import Self, TypeVar

import store.changes as changes
from collectors.errors import StoreError, StoreWriteError
from store.db import Connection, transaction, translated
from store.health import StoreHealth

T = TypeVar("T")


class WriterConnection:
    """Owns the writer connection of one store class; ``what`` names it in errors ("alert store")."""

    def __init__(self, conn: Connection, what: str, *, counter: str | None = None) -> None:
        self._conn = conn
        self._what = what
        # Reentrant: a write split into transactions holds it across them (AlertStore.update_firing)
        self._lock = threading.RLock()
        self._closed = False
        # shared with the file's other store classes (service.runtime): each write reports its fate
        self.health = StoreHealth(what)
        # Run first inside every write transaction (fencing, issue 46): raising aborts the write.
        self.guard: Callable[[Connection], None] | None = None
        # On a shared database (PostgreSQL): the change counter this class's caches depend on
        # (store.changes), and its value as of this writer's last commit.
        self._counter = counter if conn.dialect.shared else None
        self._version = 0
        if self._counter is not None:
            with translated(f"open {what}"):
                self._version = changes.current(conn, self._counter)

    def _stale(self) -> None:
        """Another process wrote what this class caches (under the writer lock, in the write transaction
        about to use the cache): subclasses drop their caches."""

    def _began(self) -> None:
        """Called under the lock as each write transaction begins (before its work): subclasses reset
        what a transaction's work may note."""

    def _wrote(self) -> None:
        """Called under the lock after each committed write transaction: subclasses note it."""

    def close(self) -> None:
        """Idempotent; later calls raise :class:`StoreError`."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._close_connections()

    def _close_connections(self) -> None:
        """Called once, under the lock; subclasses with more connections close them too."""
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _run(
        self,
        action: str,
        work: Callable[[Connection], T],
        *,
        write: bool = False,
        committed: Callable[[], None] | None = None,
    ) -> T:
        """``work`` under the lock (in a transaction if ``write``); then ``committed``, still under the
        lock, once the transaction has committed (never after a rollback): where a cache kept beside the
        database takes the changes, in the order they were written. A write's fate goes to ``health``."""
        with self._lock:
            try:
                with translated(action):
                    if self._closed:
                        raise StoreError(f"{action} failed: the {self._what} is closed")
                    if not write:
                        return work(self._conn)
                    with transaction(self._conn) as conn:
                        self._began()
                        if self.guard is not None:
                            self.guard(conn)
                        version = self._counted(conn)
                        result = work(conn)
                    if version is not None:
                        self._version = version
            except StoreWriteError as exc:
                if write:
                    self.health.failed(exc)
                raise
            self.health.succeeded()
            if write:
                self._wrote()
            if committed is not None:
                committed()
            return result

    def _counted(self, conn: Connection) -> int | None:
        """Bump the change counter (if any) inside the write transaction; a foreign commit since this
        writer's last one makes the caches stale. The counter's new value, once committed."""
        if self._counter is None:
            return None
        version = changes.bump(conn, self._counter)
        if version != self._version + 1:
            self._stale()
        return version
