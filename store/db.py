"""The store's connections: SQLite's (pragmas) or PostgreSQL's (:mod:`store.pg`), explicit transactions and
error translation, behind one :class:`Connection` protocol the row modules are written against.

Connections run in autocommit mode (``isolation_level=None``) so every transaction is an explicit
``BEGIN IMMEDIATE ... COMMIT``: the write lock is taken up front instead of being upgraded mid-way,
which is what makes ``busy_timeout`` reliable when another process holds the database.
"""

from __future__ import annotations

import errno
import sqlite3
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from collectors.errors import StoreCorruptError, StoreError, StoreWriteError
from store.dialect import SQLITE, Dialect
from store.gate import WriteGate, gate_for
from store.settings import StoreSettings

BUSY_TIMEOUT_MS = 5_000
# Pages a connection may cache (negative = KiB); big batch writes touch many B-tree pages.
CACHE_KIB = 32 * 1024
# A reader's cache: there is one reader per thread that reads (the event loop's thread pool, the metrics
# thread, detection), and each filled its 32 MiB as the history grew; its lookups go by index, and a page
# it misses is in the OS page cache. 4 MiB each took 25 MB off the service at 20k partitions.
READER_CACHE_KIB = 4 * 1024
# The cache of a connection while it moves the detection state (tens of MB of values read once per
# start): without the bound, each save and load left that many MB of its pages resident in the cache.
LARGE_VALUES_CACHE_KIB = 1024
# Truncate the WAL back to this size after checkpoints so one large batch does not pin disk space.
JOURNAL_SIZE_LIMIT = 64 * 1024 * 1024


class Cursor(Protocol):
    """What a statement returns on either backend (:class:`sqlite3.Cursor`, psycopg's cursor)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """A store connection: :class:`SqliteConnection` or :class:`store.pg.PgConnection`. Statements use
    ``?`` and ``:name`` placeholders; ``dialect`` spells what differs (:mod:`store.dialect`)."""

    @property
    def dialect(self) -> Dialect: ...

    @property
    def in_transaction(self) -> bool: ...

    def execute(self, sql: str, parameters: Any = ..., /) -> Any: ...

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Any: ...

    def close(self) -> None: ...


class SqliteConnection(sqlite3.Connection):
    """:class:`sqlite3.Connection` that names its dialect and, on a writer, its file's write gate
    (:mod:`store.gate`); its methods stay SQLite's own."""

    dialect: Dialect = SQLITE
    gate: WriteGate | None = None


# Primary result codes (the low byte of an extended code) of a disk that refuses writes: it may come back
# (space freed, the volume remounted read-write), and the store's writers keep what they must write.
WRITE_FAILURES = {
    8: "SQLITE_READONLY",
    10: "SQLITE_IOERR",
    13: "SQLITE_FULL",
    14: "SQLITE_CANTOPEN",
}
# A file that is not a database, or a damaged one: no retry helps (see ``offsetguard store check``).
CORRUPTION = {11: "SQLITE_CORRUPT", 26: "SQLITE_NOTADB"}
_OS_WRITE_FAILURES = {errno.ENOSPC, errno.EROFS, errno.EIO, errno.EDQUOT, errno.EACCES, errno.EPERM}


def _psycopg() -> Any:
    """psycopg if it is loaded, else None. Only a PostgreSQL store loads it (:mod:`store.pg`; its libpq
    is ~20 MB of a SQLite user's RSS otherwise), and no psycopg error exists before it is."""
    return sys.modules.get("psycopg")


def write_failure(exc: BaseException) -> str | None:
    """The name of the disk failure ``exc`` is (``SQLITE_FULL``, ``ENOSPC``...), or None if it is another."""
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        return WRITE_FAILURES.get(code & 0xFF) if isinstance(code, int) else None
    if isinstance(exc, OSError) and exc.errno in _OS_WRITE_FAILURES:
        return errno.errorcode.get(exc.errno or 0, "OSError")
    if (psycopg := _psycopg()) is None:
        return None
    if isinstance(exc, psycopg.errors.LockNotAvailable):
        return None  # another writer held the write lock too long: SQLITE_BUSY's case, a plain StoreError
    if isinstance(exc, psycopg.OperationalError | psycopg.errors.ReadOnlySqlTransaction):
        # the server is gone or refuses (restarting, full disk, a read-only standby): it may come back
        return f"PG_{exc.sqlstate}" if exc.sqlstate else "PG_CONNECTION"
    return None


def corruption(exc: BaseException) -> str | None:
    """``SQLITE_CORRUPT`` or ``SQLITE_NOTADB`` if ``exc`` says the file is damaged, else None."""
    psycopg = _psycopg()
    if psycopg is not None and isinstance(exc, psycopg.errors.DataCorrupted | psycopg.errors.IndexCorrupted):
        return f"PG_{exc.sqlstate}"
    code = getattr(exc, "sqlite_errorcode", None)
    return CORRUPTION.get(code & 0xFF) if isinstance(exc, sqlite3.Error) and isinstance(code, int) else None


def database_errors(*also: type[Exception]) -> tuple[type[Exception], ...]:
    """What a store connection raises, on either backend (translated() turns each into a StoreError):
    :class:`sqlite3.Error`, and :class:`psycopg.Error` once psycopg is loaded; then ``also``."""
    psycopg = _psycopg()
    return (sqlite3.Error, *also) if psycopg is None else (sqlite3.Error, psycopg.Error, *also)


@contextmanager
def translated(action: str, *, cluster: str | None = None) -> Iterator[None]:
    """Re-raise any :class:`sqlite3.Error`, :class:`psycopg.Error` (and OS error) inside the block as
    :class:`StoreError`: a disk that refuses writes or a PostgreSQL server out of reach as
    :class:`StoreWriteError`, a damaged file as :class:`StoreCorruptError`."""
    try:
        yield
    except database_errors(OSError) as exc:
        text = (exc.strerror or str(exc)) if isinstance(exc, OSError) else str(exc)
        message = f"{action} failed: {text}"
        if (code := write_failure(exc)) is not None:
            raise StoreWriteError(message, code=code, cluster=cluster) from exc
        if corruption(exc) is not None:
            raise StoreCorruptError(message) from exc
        raise StoreError(message, cluster=cluster) from exc


def connect_to(settings: StoreSettings, *, readonly: bool = False) -> Connection:
    """A connection to the store ``settings`` name: PostgreSQL at ``store.url`` if set, else the SQLite
    file at ``store.path`` (:func:`connect`). Readers can never write."""
    if settings.url is None:
        return connect(settings.path, readonly=readonly)
    from store.pg import connect as pg_connect

    password = settings.password.get_secret_value() if settings.password is not None else None
    return pg_connect(settings.url, password=password, readonly=readonly, lock_timeout_ms=BUSY_TIMEOUT_MS)


def describe(settings: StoreSettings) -> str:
    """Where the store is, for messages: its file, or ``PostgreSQL host:port/db`` (never a password)."""
    if settings.url is None:
        return str(settings.path)
    from store.pg import where

    return f"PostgreSQL {where(settings.url)}"


def _journal_mode_wal(conn: sqlite3.Connection) -> str:
    """``PRAGMA journal_mode = WAL``, retried while another connection holds the lock it needs for up to
    :data:`BUSY_TIMEOUT_MS`: SQLite answers "database is locked" at once there, without its busy handler
    (processes opening one new file together, e.g. two replicas starting)."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            code = getattr(exc, "sqlite_errorcode", None)
            busy = isinstance(code, int) and code & 0xFF in (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED
            if not busy or time.monotonic() >= deadline:
                raise
            time.sleep(0.02)


def connect(path: Path, *, readonly: bool = False) -> SqliteConnection:
    """Open ``path`` with the store's pragmas; readers get ``query_only`` so they can never write."""
    # check_same_thread=False: callers serialise use themselves (one writer lock, one reader per thread)
    # and close() may run on another thread than the one that opened the connection.
    conn = sqlite3.connect(
        path,
        isolation_level=None,
        check_same_thread=False,
        timeout=BUSY_TIMEOUT_MS / 1000,
        factory=SqliteConnection,
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute(f"PRAGMA cache_size = -{READER_CACHE_KIB if readonly else CACHE_KIB}")
        conn.execute("PRAGMA foreign_keys = ON")
        if readonly:
            conn.execute("PRAGMA query_only = ON")
        else:
            mode = _journal_mode_wal(conn)
            if str(mode).lower() != "wal":
                raise StoreError(f"cannot put {path} in WAL mode (journal_mode is {mode})")
            # NORMAL in WAL mode: a commit survives a process crash (kill -9); only an OS crash or
            # power loss can lose the newest transactions, and never corrupts the database.
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(f"PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT}")
            conn.gate = gate_for(path)
    except BaseException:
        conn.close()
        raise
    return conn


@contextmanager
def small_cache(conn: Connection) -> Iterator[Connection]:
    """Run the block with the writer's page cache bounded to :data:`LARGE_VALUES_CACHE_KIB` (SQLite frees
    the pages above a lowered bound at once, and spills a larger transaction's pages to the WAL early),
    then restore :data:`CACHE_KIB`. Nothing on PostgreSQL (the server's cache is its own)."""
    if conn.dialect.postgresql:
        yield conn
        return
    conn.execute(f"PRAGMA cache_size = -{LARGE_VALUES_CACHE_KIB}")
    try:
        yield conn
    finally:
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")


@contextmanager
def transaction(conn: Connection) -> Iterator[Connection]:
    """Run the block in one write transaction holding the database's write lock (SQLite's ``BEGIN
    IMMEDIATE``; PostgreSQL's advisory lock, :data:`store.dialect.POSTGRESQL`); roll back if anything
    raises. A SQLite writer first waits its turn at the file's write gate (:mod:`store.gate`), up to
    :data:`BUSY_TIMEOUT_MS`, then fails as SQLite's busy handler would: "database is locked"."""
    gate: WriteGate | None = getattr(conn, "gate", None)
    if gate is not None and not gate.acquire(BUSY_TIMEOUT_MS / 1000):
        raise sqlite3.OperationalError("database is locked (this process's other writers held it)")
    try:
        begin, *locks = conn.dialect.begin_write
        conn.execute(begin)
        try:
            for statement in locks:
                conn.execute(statement)
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    finally:
        if gate is not None:
            gate.release()
