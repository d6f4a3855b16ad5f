"""The log-end history this process wrote, kept to answer "when did the log end reach X" without SQL.

:func:`store.queries.log_end_reached_at` answers from ``partition_offsets_history``: find the newest row
whose log end is below ``X`` (the *pivot*; rows with no log end take no part); the answer is the first row
after it (all later rows have reached ``X``), or the first row at all when there is no pivot. The
:class:`~store.partitions.PartitionWriter` hands every history row it committed to :class:`LogEndMemory`,
which keeps, per partition, the newest :data:`KEEP` rows with a log end, and answers from them exactly
when the answer is determined by them:

- the kept rows are **all** the rows of that partition's history from ``since`` on (a suffix). A row is
  only ever added at or after ``since``; dropping the oldest kept rows moves ``since`` up; a partition is
  taken in only once the newest stored row of its history is known not to be newer than the row written
  (asked in the write's transaction, :meth:`PartitionWriter.write`), or when this process inserted it
  (then the kept rows are ``complete``: no row before them);
- so a pivot among the kept rows is the database's pivot, and the row after it is the database's answer;
  with no kept pivot the answer is known only when the rows are complete, else the caller asks SQL.

What could make the database differ from the kept rows is handled where it happens: a same-instant
replace replaces the kept row (a row whose log end is unknown removes it); a write whose transaction did
not commit (or whose commit failed: it may have committed) forgets its partitions (:meth:`forget`);
history thinning drops the kept rows it may delete, before it deletes (:meth:`trim`); another process
writing the database: on a shared database the caller compares the history's change counter with
:attr:`version` (set by the store after each of its own history commits) and a reload of the writers
starts a new, empty memory; with ha on (PostgreSQL, or a SQLite file two replicas share) the store
asks only while this replica may write, and only rows kept at its current lease epoch (:meth:`hold`).
A partition whose log end exceeds 2**53 (kept as doubles) is left to SQL. A topic re-created (the log
end falling) is a row like any other: the pivot rule is the database's.

Thread safety: rows are added under the store's writer lock, lookups come from detection's and the
render's threads; one lock guards the rows (held for a whole batch: its answers are one state).
"""

from __future__ import annotations

import math
import threading
from array import array
from collections.abc import Iterable
from dataclasses import dataclass

Key = tuple[str, str, int]  # (cluster, topic, partition)
Wanted = tuple[str, int, int]  # (topic, partition, offset)
# (key, observed_at, log_end or None, inserted by this write)
Row = tuple[Key, float, int | None, bool]

KEEP = 8  # rows kept per partition: at one log-end change per 5 s cycle, 40 s of a busy partition
_INT64 = (-(2**63), 2**63 - 1)  # what the database's INTEGER holds
_EXACT = 2**53  # log ends kept as doubles: exact up to here (a larger one leaves its partition to SQL)
_ALL = -math.inf  # `since` of a partition whose kept rows are complete (no stored row before them)

# One partition's kept rows, one array of doubles: [since, t0, end0, t1, end1, ...], oldest first: every
# stored row with a log end from `since` on (about 200 bytes at KEEP rows: 20,000 partitions, 5 MB).
_Rows = array


@dataclass(frozen=True, slots=True)
class LookupCounts:
    """Crossing times answered from the kept rows, and those left to SQL, since the store opened."""

    memory: int
    sql: int


class LookupCounter:
    """The store's running :class:`LookupCounts` (lookups come from several threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._memory = 0
        self._sql = 0

    def add(self, memory: int, sql: int) -> None:
        with self._lock:
            self._memory += memory
            self._sql += sql

    def counts(self) -> LookupCounts:
        with self._lock:
            return LookupCounts(self._memory, self._sql)


class LogEndMemory:
    """Per-partition recent log-end history; see the module docstring for when it answers."""

    def __init__(self, version: int | None = None) -> None:
        self._lock = threading.Lock()
        self._rows: dict[Key, _Rows] = {}
        # partitions not taken in yet: the newest stored row's time (None: none) as asked at a write
        self._floors: dict[Key, float | None] = {}
        # On a shared database: the history's change counter the kept rows are exact at (the store sets it)
        self.version = version
        self._epoch: int | None = None  # with ha on: the lease epoch the kept rows were written at

    # ------------------------------------------------------------------ the writer's side

    def untracked(self, keys: Iterable[Key]) -> list[Key]:
        """Of ``keys`` (existing partitions about to get a row), those whose newest stored row's time is
        not known yet (the writer asks it, in the write's transaction)."""
        rows, floors = self._rows, self._floors
        return [k for k in keys if k not in rows and k not in floors]

    def add(self, written: Iterable[Row], floors: dict[Key, float | None]) -> None:
        """The rows of a committed write (and the newest stored row times the write asked for)."""
        with self._lock:
            self._floors.update(floors)
            get = self._rows.get
            for key, at, end, inserted in written:
                rec = get(key)
                if rec is None:
                    rec = self._take_in(key, at, inserted)
                    if rec is None:
                        continue
                try:
                    if end is not None and len(rec) > 1 and at > rec[-2] and -_EXACT <= end <= _EXACT:
                        rec.append(at)  # the usual row: the newest
                        rec.append(end)
                        if len(rec) > 1 + 2 * KEEP:
                            del rec[1:3]
                            rec[0] = rec[1]  # `since` moves up; no longer complete
                    else:
                        _put(rec, at, end)
                except OverflowError:  # a log end beyond 64 bits: this partition is SQL's alone
                    del self._rows[key]
                    self._floors[key] = math.inf

    def _take_in(self, key: Key, at: float, inserted: bool) -> _Rows | None:
        if inserted:  # a new partition: nothing stored before this row
            rec = array("d", (_ALL,))
        elif key not in self._floors:
            return None  # not asked (cannot happen through the writer): SQL's
        else:
            floor = self._floors[key]
            if floor is not None and floor > at:
                return None  # stored rows newer than this one: not a suffix yet
            del self._floors[key]
            rec = array("d", (_ALL if floor is None else at,))
        self._rows[key] = rec
        return rec

    def forget(self, keys: Iterable[Key]) -> None:
        """A write of these partitions may or may not have committed: their kept rows are SQL's again."""
        with self._lock:
            for key in keys:
                self._rows.pop(key, None)
                self._floors.pop(key, None)

    def trim(self, cutoff: float) -> None:
        """History thinning is about to delete rows older than ``cutoff``: drop those kept."""
        with self._lock:
            for rec in self._rows.values():
                drop = 0
                while 1 + 2 * drop < len(rec) and rec[1 + 2 * drop] < cutoff:
                    drop += 1
                if drop:
                    del rec[1 : 1 + 2 * drop]
                if drop or rec[0] != _ALL:
                    rec[0] = max(rec[0], cutoff)

    def hold(self, epoch: int) -> None:
        """The replica writes at lease ``epoch``: rows kept at another one are forgotten (another replica
        may have written between); the first epoch held is the one the rows since the memory was made
        (each promotion reloads the store's writers) were written at. A write under way keeps only the
        partitions its transaction asked about."""
        with self._lock:
            if self._epoch is None:
                self._epoch = epoch
            elif epoch != self._epoch:
                self._epoch = epoch
                self._clear()

    def clear(self) -> None:
        """Forget every kept row."""
        with self._lock:
            self._clear()

    def _clear(self) -> None:
        self._rows.clear()
        self._floors.clear()

    # ------------------------------------------------------------------ the readers' side

    def reached_at(self, key: Key, offset: int, until: float | None) -> tuple[bool, float | None]:
        """(True, the answer) when the kept rows determine it, else (False, None)."""
        with self._lock:
            rec = self._rows.get(key)
            if rec is None or not _INT64[0] <= offset <= _INT64[1]:
                return False, None
            return _answer(rec, offset, until)

    def reached_at_many(
        self, cluster: str, wanted: Iterable[Wanted]
    ) -> tuple[dict[Wanted, float], list[Wanted]]:
        """The answers the kept rows determine (None ones left out) and the requests they do not."""
        found: dict[Wanted, float] = {}
        rest: list[Wanted] = []
        low, high = _INT64
        with self._lock:
            get = self._rows.get
            for w in wanted:
                topic, partition, offset = w
                rec = get((cluster, topic, partition))
                if rec is None or not low <= offset <= high:
                    rest.append(w)
                    continue
                known, at = _answer(rec, offset, None)
                if not known:
                    rest.append(w)
                elif at is not None:
                    found[w] = at
        return found, rest


def _put(rec: _Rows, at: float, end: int | None) -> None:
    """Add one stored row (``replace_into`` on the time: a row at the same instant is replaced)."""
    if at < rec[0]:
        return  # before the kept suffix: the kept rows are still every row from `since` on
    if end is not None and not -_EXACT <= end <= _EXACT:
        raise OverflowError(end)
    i = 1
    while i < len(rec) and rec[i] < at:
        i += 2
    same = i < len(rec) and rec[i] == at
    if end is None:  # no log end: no part in the lookups, but it replaced a kept row at that instant
        if same:
            del rec[i : i + 2]
        return
    if same:
        rec[i + 1] = end
        return
    rec[i:i] = array("d", (at, end))
    if len(rec) > 1 + 2 * KEEP:
        del rec[1:3]
        rec[0] = rec[1]


def _answer(rec: _Rows, offset: int, until: float | None) -> tuple[bool, float | None]:
    n = len(rec)  # rows 1 .. n - 2 (their times), up to `until`
    if until is not None:
        while n > 1 and rec[n - 2] > until:
            n -= 2
    for i in range(n - 1, 1, -2):
        if rec[i] < offset:  # the pivot: every kept row after it (up to `until`) has reached `offset`
            return True, (rec[i + 1] if i + 1 < n else None)
    if rec[0] == _ALL:
        return True, (rec[1] if n > 1 else None)
    return False, None
