"""The read connections of one store class: one per reading thread on SQLite, a small pool on PostgreSQL.

SQLite's WAL readers cost a file handle and never wait for the writer, so each thread that reads keeps
its own (the event loop's thread pool, the metrics thread, detection). On PostgreSQL each connection is a
server process and the server's ``max_connections`` (100 by default) is shared by both replicas: reads
borrow one of at most :data:`POOL_SIZE` connections per store class, opened as needed and kept.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from collectors.errors import StoreError
from store.db import Connection, connect_to
from store.settings import StoreSettings

POOL_SIZE = 4  # per store class and replica: Store, AlertStore (so 8 reading sessions a replica at most)


class Readers:
    """Read-only connections to ``settings``' store; ``what`` names the store class in errors."""

    def __init__(self, settings: StoreSettings, what: str, *, pool_size: int = POOL_SIZE) -> None:
        self._settings = settings
        self._what = what
        self._pooled = settings.url is not None
        self._lock = threading.Lock()
        self._all: list[Connection] = []
        self._idle: list[Connection] = []
        self._slots = threading.BoundedSemaphore(pool_size)
        self._local = threading.local()
        self._closed = False

    @contextmanager
    def connection(self, action: str, cluster: str | None = None) -> Iterator[Connection]:
        """A reader for the block (this thread's own, or one borrowed from the pool)."""
        if not self._pooled:
            yield self._own(action, cluster)
            return
        with self._slots:
            conn = self._borrow(action, cluster)
            try:
                yield conn
            finally:
                with self._lock:
                    if self._closed:
                        conn.close()
                    else:
                        self._idle.append(conn)

    def _own(self, action: str, cluster: str | None) -> Connection:
        conn: Connection | None = getattr(self._local, "conn", None)
        if conn is not None and not self._closed:
            return conn
        conn = self._open(action, cluster)
        self._local.conn = conn
        return conn

    def _borrow(self, action: str, cluster: str | None) -> Connection:
        with self._lock:
            if self._idle and not self._closed:
                return self._idle.pop()
        return self._open(action, cluster)

    def _open(self, action: str, cluster: str | None) -> Connection:
        with self._lock:
            if self._closed:
                raise StoreError(f"{action} failed: the {self._what} is closed", cluster=cluster)
            conn = connect_to(self._settings, readonly=True)
            self._all.append(conn)
            return conn

    def close(self) -> None:
        """Close every reader (a borrowed one when it is given back); later reads raise StoreError."""
        with self._lock:
            self._closed = True
            idle = set(map(id, self._idle))
            for conn in self._all:
                if not self._pooled or id(conn) in idle:
                    conn.close()
            self._all.clear()
            self._idle.clear()
