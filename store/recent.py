"""A history's newest rows, kept in a table of their own and merged into the history about once a minute.

A history table is ordered by key, then time (its primary key ``(key_id, observed_at)``), so one key's history
is a seek. But a write in which every key moved then dirties one page per key: at 12,500 moving
group-partitions every 5 s, 12.5k pages (the WAL and its checkpoint write each twice, and once the table
outgrows the writer's cache it is read back too). Rows go first to a small table of the same columns (keyed by
time first where only the API reads it, so that each write appends). Every :data:`MERGE_AFTER` seconds of
observed time (or :data:`MERGE_ROWS` rows) one statement moves them into the history, about a dozen rows of a
key to its page at once, and empties it. A write of fewer than :data:`KEEP_FROM` rows while none are kept goes
straight to the history: at a few hundred keys a write a key seldom moves twice a minute, and the copy only
adds work (3x the bytes written at 20k partitions / 50k group-partitions with 1 % moving). Both tables live in
the same database and are written in the same transactions, so a crash or a fenced write loses nothing the
single table would keep.

Readers take both tables (:mod:`store.queries`): the recent rows, and the history's rows no recent row
replaces. A (key, instant) written again replaces the row, as ``INSERT OR REPLACE`` did in the single table:
the recent table's row wins over the history's until the merge replaces the older one. Each read puts the
``UNION ALL`` at its top, one arm per table (a join against a compound subquery would have SQLite build the
whole history first), or combines each table's answer (:mod:`store.log_end_times`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from store.db import Connection

MERGE_AFTER = 60.0  # seconds of observed time between the first row kept and the merge
MERGE_ROWS = 200_000  # or this many rows kept, whichever comes first
KEEP_FROM = 2_000  # a write of fewer rows while none are kept goes straight to the history
KEY = ("key_id", "observed_at")


class Recent:
    """The recent rows of ``history`` (kept in ``table``), for its writer (callers serialise calls)."""

    def __init__(self, conn: Connection, history: str, table: str, columns: Sequence[str]) -> None:
        self._insert = conn.dialect.replace_into(table, columns, KEY)
        self._direct = conn.dialect.replace_into(history, columns, KEY)
        names = ", ".join(columns)
        # In the history's order: each of its pages is then visited once (in the recent table's time order,
        # once per instant kept, and read back again and again once the history outgrows the cache).
        rows = f"SELECT {names} FROM {table} ORDER BY {', '.join(KEY)}"
        if conn.dialect.postgresql:
            sets = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in KEY)
            conflict = f"ON CONFLICT ({', '.join(KEY)}) DO UPDATE SET {sets}"
            move = f"INSERT INTO {history} ({names}) {rows} {conflict}"
        else:
            move = f"INSERT OR REPLACE INTO {history} ({names}) {rows}"
        self._merge = (move, f"DELETE FROM {table}")
        # the observed time of the first row kept since the last merge, and the rows written since
        self._since: float | None = None
        self._rows = 0
        if conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None:
            self._since = -math.inf  # rows another process kept: merged by the first write (due at once)

    def write(self, conn: Connection, rows: Sequence[tuple[object, ...]], at: float) -> RecentWrite:
        """Keep ``rows`` (observed at ``at``), merging first if the rows kept are due, or write them
        straight to the history if few and none are kept (in the caller's open transaction; pass what it
        returns to :meth:`written` once that commits)."""
        due = self.due(at)
        if due:
            self.merge(conn)
        if not rows:
            return RecentWrite(due, 0, at)
        if len(rows) < KEEP_FROM and (due or self._since is None):
            conn.executemany(self._direct, rows)
            return RecentWrite(due, 0, at)
        conn.executemany(self._insert, rows)
        return RecentWrite(due, len(rows), at)

    def due(self, at: float) -> bool:
        """The rows kept are old enough (in observed time; a clock gone back counts), or many enough."""
        since = self._since
        return since is not None and (not since <= at < since + MERGE_AFTER or self._rows >= MERGE_ROWS)

    def merge(self, conn: Connection) -> None:
        """Move every row kept into the history (in the caller's open transaction)."""
        for statement in self._merge:
            conn.execute(statement)

    def written(self, write: RecentWrite) -> None:
        """The transaction of a :meth:`write` committed."""
        if write.merged:
            self._since, self._rows = None, 0
        if write.kept:
            if self._since is None:
                self._since = write.at
            self._rows += write.kept


class RecentWrite(NamedTuple):
    """What a :meth:`Recent.write` did: merged the rows kept first, kept ``kept`` rows observed ``at``."""

    merged: bool
    kept: int
    at: float


NOTHING = RecentWrite(False, 0, 0.0)
