"""The leader lease of issue 46: which replica is active, agreed through the database.

One row per lease name in ``leader_lease`` (name, holder, epoch, expires_at, renewed_at). Every time is
the **database's** clock (:data:`SQLITE_NOW` / :data:`POSTGRES_NOW`): no replica's clock is trusted, so two
replicas whose clocks disagree still agree on who holds it. :meth:`Lease.cycle` is one transaction that
renews the lease if it is still ours (holder and epoch, even past its expiry: nobody took it over, so no
one acted at another epoch meanwhile, which lets the active replica ride out a database restart), takes
it over if it has expired (or was never taken) and then increments the epoch, and otherwise reports who
holds it. The epoch is the fencing token: :mod:`store.fencing` checks it inside every guarded write
transaction.

A session advisory lock alone is not enough (a frozen process keeps its connection and its lock); a lease
that must be renewed is: a process frozen past ``expires_at`` loses it, and its epoch no longer matches.

Beside the row, the holder keeps a *local* deadline on ``CLOCK_MONOTONIC`` (which keeps counting while a
process is stopped): the monotonic time taken *before* the renewing transaction started, plus the lease,
minus a safety margin. The database cannot have expired the lease before it, so a send started before
the deadline is one no other replica can be making (see :mod:`service.notify.dispatcher`); a process
that wakes from SIGSTOP finds its deadline passed and sends nothing.

The table is created if missing (portable DDL: SQLite and PostgreSQL both take it) rather than by a
migration, so the lease works the same on a store of any schema version and on either dialect.
Blocking: call from a worker thread in async code; failures raise
:class:`~collectors.errors.StoreError`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from collectors.errors import StoreError

DDL = (
    "CREATE TABLE IF NOT EXISTS leader_lease ("
    " name TEXT PRIMARY KEY,"
    " holder TEXT NOT NULL,"
    " epoch BIGINT NOT NULL,"
    " expires_at DOUBLE PRECISION NOT NULL,"
    " renewed_at DOUBLE PRECISION NOT NULL)"
)
SQLITE_NOW = "((julianday('now') - 2440587.5) * 86400.0)"
POSTGRES_NOW = "EXTRACT(EPOCH FROM clock_timestamp())::double precision"
DEFAULT_NAME = "offsetguard"
_COLUMNS = "name, holder, epoch, expires_at, renewed_at"
_INSERT = f"INSERT INTO leader_lease ({_COLUMNS}) VALUES (?, ?, 1, ?, ?)"
_RENEW = "UPDATE leader_lease SET expires_at = ?, renewed_at = ? WHERE name = ? AND holder = ? AND epoch = ?"
_TAKE = (
    "UPDATE leader_lease SET holder = ?, epoch = ?, expires_at = ?, renewed_at = ?"
    " WHERE name = ? AND epoch = ?"
)
_RELEASE = "UPDATE leader_lease SET expires_at = {now} WHERE name = ? AND holder = ? AND epoch = ?"


@dataclass(frozen=True, slots=True)
class Clock:
    """The per-database bits of the lease: the database's clock, how its transaction begins, and the row
    lock a reader of the lease takes (PostgreSQL's ``FOR UPDATE``; SQLite's ``BEGIN IMMEDIATE`` already
    holds the database's one write lock). Statements use ``?`` marks: the store's PostgreSQL connection
    translates them (:mod:`store.pg`)."""

    now: str
    begin: str
    for_update: str


SQLITE = Clock(SQLITE_NOW, "BEGIN IMMEDIATE", "")
POSTGRES = Clock(POSTGRES_NOW, "BEGIN", " FOR UPDATE")


def dialect_of(conn: Any) -> Clock:
    """PostgreSQL's for a connection whose ``dialect`` says so (:mod:`store.dialect`), else SQLite's."""
    return POSTGRES if getattr(getattr(conn, "dialect", None), "postgresql", False) else SQLITE


@dataclass(frozen=True, slots=True)
class LeaseRow:
    """The lease as the database holds it; times on the database's clock (Unix seconds)."""

    name: str
    holder: str
    epoch: int
    expires_at: float
    renewed_at: float


@dataclass(frozen=True, slots=True)
class Cycle:
    """One :meth:`Lease.cycle`: the row after it, whether we hold it now, and the database's time."""

    row: LeaseRow | None
    held: bool
    now: float


def ensure_table(conn: Any) -> None:
    """Create ``leader_lease`` if missing (on a connection in autocommit mode)."""
    conn.execute(DDL)


def read_row(conn: Any, name: str, *, lock: bool = False) -> tuple[LeaseRow | None, float]:
    """The lease row of ``name`` (None: never taken) and the database's time, in the caller's
    transaction; ``lock``: take PostgreSQL's row lock until it ends."""
    d = dialect_of(conn)
    now = float(conn.execute(f"SELECT {d.now}").fetchone()[0])
    query = f"SELECT {_COLUMNS} FROM leader_lease WHERE name = ?"
    found = conn.execute(query + (d.for_update if lock else ""), (name,)).fetchone()
    if found is None:
        return None, now
    return LeaseRow(str(found[0]), str(found[1]), int(found[2]), float(found[3]), float(found[4])), now


class Lease:
    """One replica's view of the lease ``name``, over a connection of its own (``connect`` makes it).

    :attr:`epoch` is the epoch we hold, None while we do not; :meth:`valid` says whether the local
    monotonic deadline has not passed. Thread-safe: the fencing guard reads it from writer threads, and
    calls :meth:`lost` from inside a write transaction that holds the lease row (PostgreSQL's row lock,
    SQLite's write lock). So two locks: one orders the transactions on this lease's connection, the other
    only the local fields, never held across a database call; were :meth:`lost` to wait for the first, a
    lease cycle waiting for that row would deadlock with it until the database's lock timeout, the lease
    unrenewed meanwhile (a replica woken from SIGSTOP did that to the active one's renewals).
    """

    def __init__(
        self,
        connect: Callable[[], Any],
        holder: str,
        lease_seconds: float,
        *,
        name: str = DEFAULT_NAME,
        margin_seconds: float | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if lease_seconds <= 0:
            raise ValueError("lease_seconds must be positive")
        self.name = name
        self.holder = holder
        self.lease_seconds = lease_seconds
        # a send must start this long before the lease can have run out on the database's clock
        self.margin_seconds = margin_seconds if margin_seconds is not None else lease_seconds / 5
        self._connect = connect
        self._monotonic = monotonic
        self._conn: Any = None
        self._lock = threading.Lock()  # one transaction at a time on the connection
        self._state = threading.Lock()  # the local fields below; never held across a database call
        self._epoch: int | None = None
        self._deadline = float("-inf")
        self.last: LeaseRow | None = None  # the row as last read (who holds it, at which epoch)

    # ------------------------------------------------------------------ local view

    @property
    def epoch(self) -> int | None:
        """The epoch we hold (None: we do not hold the lease)."""
        return self._epoch

    def valid(self) -> bool:
        """We hold the lease and its local monotonic deadline has not passed."""
        return self._epoch is not None and self._monotonic() < self._deadline

    def remaining(self) -> float:
        """Seconds left before the local deadline (negative: passed; -inf: not held)."""
        return self._deadline - self._monotonic() if self._epoch is not None else float("-inf")

    def lost(self) -> None:
        """Forget the lease locally (a write found it fenced): nothing is sent or written until a
        :meth:`cycle` holds it again. Called inside a write transaction holding the lease row: it must not
        wait for a lease cycle, which may be waiting for that row."""
        with self._state:
            self._epoch = None
            self._deadline = float("-inf")

    # ------------------------------------------------------------------ database

    def cycle(self) -> Cycle:
        """Renew the lease if it is ours at our epoch; take it over (epoch + 1) if it has expired or was
        never taken; else leave it. One transaction; raises :class:`StoreError`."""
        with self._lock:
            started = self._monotonic()
            try:
                result = self._in_transaction(self._cycle)
            except StoreError:
                raise
            except Exception as exc:  # sqlite3 / psycopg errors, a closed or broken connection
                self._drop_connection()
                raise StoreError(f"leader lease {self.name!r} not renewed: {exc}") from exc
            with self._state:
                if result.held and result.row is not None:
                    self._epoch = result.row.epoch
                    self._deadline = started + self.lease_seconds - self.margin_seconds
                else:
                    self._epoch = None
                    self._deadline = float("-inf")
                self.last = result.row
            return result

    def _cycle(self, conn: Any) -> Cycle:
        row, now = read_row(conn, self.name, lock=True)
        expires = now + self.lease_seconds
        if row is None:
            conn.execute(
                _INSERT,
                (self.name, self.holder, expires, now),
            )
            return Cycle(LeaseRow(self.name, self.holder, 1, expires, now), True, now)
        if row.holder == self.holder and row.epoch == self._epoch:  # still ours: renewed, even if it ran
            # out meanwhile (a stalled database): nobody took it, so nobody acted at another epoch
            conn.execute(
                _RENEW,
                (expires, now, self.name, self.holder, row.epoch),
            )
            return Cycle(LeaseRow(self.name, self.holder, row.epoch, expires, now), True, now)
        if row.expires_at <= now:  # expired: taken over, whoever held it (a past life of ours too)
            epoch = row.epoch + 1
            conn.execute(
                _TAKE,
                (self.holder, epoch, expires, now, self.name, row.epoch),
            )
            return Cycle(LeaseRow(self.name, self.holder, epoch, expires, now), True, now)
        return Cycle(row, False, now)

    def release(self) -> bool:
        """End our lease now (a clean stop: a standby takes over at its next cycle, not after the
        lease runs out); False if it was not ours any more."""
        with self._lock:
            with self._state:
                epoch, self._epoch, self._deadline = self._epoch, None, float("-inf")
            if epoch is None:
                return False

            def work(conn: Any) -> bool:
                sql = _RELEASE.format(now=dialect_of(conn).now)
                cur = conn.execute(sql, (self.name, self.holder, epoch))
                return bool(cur.rowcount)

            try:
                return self._in_transaction(work)
            except Exception as exc:
                self._drop_connection()
                raise StoreError(f"leader lease {self.name!r} not released: {exc}") from exc

    def read(self) -> LeaseRow | None:
        """The row as the database holds it now (for /readyz and tests)."""
        with self._lock:
            try:
                return self._in_transaction(lambda conn: read_row(conn, self.name)[0])
            except Exception as exc:
                self._drop_connection()
                raise StoreError(f"leader lease {self.name!r} not read: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._drop_connection()

    def _in_transaction(self, work: Callable[[Any], Any]) -> Any:
        if self._conn is None:
            conn = self._connect()
            try:
                ensure_table(conn)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        conn = self._conn
        conn.execute(dialect_of(conn).begin)
        try:
            result = work(conn)
            conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(Exception):  # the connection may be gone; the caller drops it
                conn.execute("ROLLBACK")
            raise
        return result

    def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # closing a broken connection: nothing left to do
                conn.close()
