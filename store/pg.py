"""PostgreSQL connections for the store (``store.url``): the calling convention of :mod:`sqlite3`, so the
row modules run unchanged on both backends.

:class:`PgConnection` wraps one psycopg 3 connection in autocommit mode (every transaction explicit, as on
SQLite), translates the ``?`` and ``:name`` placeholders once per statement text, and binds on the client
side (``ClientCursor``: ``? IS NULL`` needs no type, as on SQLite). A connection the server dropped
(PostgreSQL restarted, the network went away) fails the call in progress (a ``psycopg.OperationalError``,
which :func:`store.db.translated` turns into :class:`~collectors.errors.StoreWriteError`) and is opened
again at the next call that starts outside a transaction: the store recovers by itself once the server is
back. A read, or the BEGIN of a transaction, that finds its session dead is run once more on a new one
(nothing was done yet), so a server restarted between two calls costs no failed call.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import psycopg
from psycopg import ClientCursor

from store.dialect import POSTGRESQL, Dialect

CONNECT_TIMEOUT_SECONDS = 5
SCHEMES = ("postgresql", "postgres")
# ?, or :name not preceded by a colon (PostgreSQL's ::casts stay); a literal % doubled for psycopg
# Statements run once more on a new session when the old one turns out dead (outside a transaction: they
# had no effect yet): reads and the BEGIN of a transaction.
_RETRIED = ("BEGIN", "SELECT", "WITH")
_PLACEHOLDER = re.compile(r"%|\?|(?<!:):([A-Za-z_][A-Za-z0-9_]*)")


@functools.lru_cache(maxsize=512)
def pg_sql(sql: str) -> str:
    """``sql`` with SQLite's ``?`` / ``:name`` placeholders as psycopg's ``%s`` / ``%(name)s``."""

    def swap(m: re.Match[str]) -> str:
        if m.group(0) == "%":
            return "%%"
        if m.group(0) == "?":
            return "%s"
        return f"%({m.group(1)})s"

    return _PLACEHOLDER.sub(swap, sql)


def _bound(sql: str, parameters: Sequence[Any] | Mapping[str, Any]) -> tuple[str, Any]:
    """What psycopg executes: without parameters the text goes as written (psycopg reads no % in it)."""
    return (pg_sql(sql), parameters) if parameters else (sql, None)


def where(url: str) -> str:
    """``host:port/db`` of ``url``, without credentials: what errors and logs name."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    port = f":{parts.port}" if parts.port else ""
    return f"{host}{port}{parts.path or '/'}"


class PgConnection:
    """One PostgreSQL session with :class:`sqlite3.Connection`'s calling convention (see the module)."""

    dialect: Dialect = POSTGRESQL

    def __init__(
        self, url: str, *, password: str | None = None, readonly: bool = False, lock_timeout_ms: int = 5_000
    ) -> None:
        self._url = url
        self._password = password
        self._readonly = readonly
        self._lock_timeout_ms = lock_timeout_ms
        self._tx = False  # a transaction this wrapper began is open
        self._closed = False
        self._raw = self._open()

    def _open(self) -> psycopg.Connection[Any]:
        # lock_timeout bounds the wait for the write lock, as SQLite's busy_timeout does
        options = f"-c lock_timeout={self._lock_timeout_ms}"
        if self._readonly:
            options += " -c default_transaction_read_only=on"
        extra: dict[str, Any] = {"password": self._password} if self._password is not None else {}
        return psycopg.connect(
            self._url,
            autocommit=True,
            cursor_factory=ClientCursor,
            connect_timeout=CONNECT_TIMEOUT_SECONDS,
            application_name="offsetguard",
            options=options,
            **extra,
        )

    @property
    def in_transaction(self) -> bool:
        """A transaction was begun and not yet committed or rolled back, even if the session died with
        it: the caller's ROLLBACK then only closes it here."""
        return self._tx

    def _dead(self) -> bool:
        return self._raw.broken or self._raw.closed

    def _reopen(self) -> None:
        self._raw.close()
        self._raw = self._open()

    def _ready(self, sql: str) -> psycopg.Connection[Any]:
        """The session to run ``sql`` on: a dead one is replaced, unless a transaction was open on it (its
        earlier statements are gone with it: only the caller's ROLLBACK may follow)."""
        if self._closed:
            raise psycopg.InterfaceError("the connection is closed")
        if self._dead():
            if self._tx:
                raise psycopg.OperationalError("the connection to the server was lost in a transaction")
            self._reopen()
        return self._raw

    def execute(self, sql: str, parameters: Sequence[Any] | Mapping[str, Any] = (), /) -> Any:
        """Like :meth:`sqlite3.Connection.execute`: the cursor (fetchone, fetchall, iteration, rowcount)."""
        if sql == "ROLLBACK" and self._tx and self._dead():
            self._tx = False  # the server dropped the transaction with the session
            return None
        raw = self._ready(sql)
        retried = not self._tx and sql.lstrip().startswith(_RETRIED)
        try:
            cur = raw.execute(*_bound(sql, parameters))
        except psycopg.OperationalError:
            if not (retried and self._dead()):
                raise
            # The session was found dead by a statement that had done nothing yet (a read, or the BEGIN of
            # a transaction): once more on a new one, so a server restarted in between fails no call.
            self._reopen()
            cur = self._raw.execute(*_bound(sql, parameters))
        if sql.startswith("BEGIN"):
            self._tx = True
        elif sql in ("COMMIT", "ROLLBACK"):
            self._tx = False
        return cur

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any] | Mapping[str, Any]], /) -> Any:
        """Like :meth:`sqlite3.Connection.executemany`; ``rowcount`` sums the statements' rows."""
        raw = self._ready(sql)
        # Server-side binding here (a batch's statements are typed by their columns): prepared once,
        # the rows sent in one pipeline.
        cur = psycopg.Cursor(raw)
        cur.executemany(pg_sql(sql), list(parameters))
        return cur

    def close(self) -> None:
        self._closed = True
        self._raw.close()


def connect(
    url: str, *, password: str | None = None, readonly: bool = False, lock_timeout_ms: int = 5_000
) -> PgConnection:
    """A session on the PostgreSQL database at ``url`` (readers: ``default_transaction_read_only``)."""
    return PgConnection(url, password=password, readonly=readonly, lock_timeout_ms=lock_timeout_ms)
