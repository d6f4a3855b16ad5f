"""One scrape's view of a cluster: lag per committed group-partition, its age in seconds, its member.

Lag in seconds of a group-partition is the age of its oldest unconsumed message. The committed offset
``c`` is the next offset the group will read, so that message is offset ``c``; it exists from the moment
the log end first passed ``c`` (log end >= ``c + 1``) in the partition's current run (a truncation below
``c + 1`` starts a new run). Hence::

    lag_seconds = now - log_end_reached_at(c + 1)    when lag > 0 and the history knows that moment
    lag_seconds = 0                                  when lag == 0 (nothing is waiting)
    absent                                           when lag < 0, lag unknown or the moment unknown

The store only sees the log end at each offsets-collector run, so the moment is the first *observation*
at or after the crossing: the figure is a lower bound, short of the truth by at most one offsets
interval (or one thinning bucket for thinned history), or by more when the history starts after the
crossing. All store lookups of a scrape are one batched query per cluster, and with a :class:`ViewMemo`
only for the crossings the previous renders did not learn.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, count
from operator import attrgetter, eq, is_not, itemgetter
from typing import NamedTuple

from collectors.errors import OffsetguardError
from collectors.model import (
    ClusterMetadata,
    CommittedObservation,
    GroupMember,
    GroupsObservation,
    OffsetsObservation,
)
from service.metrics.sources import ClusterInputs, CommittedLike, LogEndTimes, ScrapeInputs

log = logging.getLogger(__name__)

Wanted = tuple[str, int, int]  # (topic, partition, offset)
LagRow = tuple[tuple[str, str, int], int, int | None]  # ((group, topic, partition), committed, lag)


class GroupPartition(NamedTuple):
    """A committed group-partition as the metrics show it.

    A named tuple, flat: a scrape builds one per committed group-partition (50,000 at fleet scale), and
    a frozen dataclass (or one nested in another) costs several times more to build than a tuple.
    """

    group: str
    topic: str
    partition: int
    committed: int
    lag: int | None  # log end - committed (negative beyond the log end); None: log range unknown
    seconds: float | None  # lag in seconds (None: absent)


@dataclass(slots=True, eq=False)
class ClusterView:
    """One cluster's observations and the lag of each committed group-partition (:attr:`lags`, sorted by
    key, with the crossing times their lag seconds need in :attr:`reached`, asked of the store once).
    :attr:`rows` are the same as :class:`GroupPartition` tuples, built only when a family reads them."""

    cluster: str
    metadata: ClusterMetadata | None
    offsets: OffsetsObservation | None
    groups: GroupsObservation | None
    committed: CommittedLike | None
    lags: Sequence[LagRow]
    reached: Mapping[Wanted, float]
    now: float
    _rows: tuple[GroupPartition, ...] | None = field(default=None, init=False, repr=False)
    _seconds: list[float | None] | None = field(default=None, init=False, repr=False)

    @property
    def seconds(self) -> list[float | None]:
        """Each lag row's lag in seconds (:func:`seconds_of`), worked out once for every family."""
        if self._seconds is None:
            self._seconds = seconds_of(self.lags, self.reached, self.now)
        return self._seconds

    @property
    def rows(self) -> tuple[GroupPartition, ...]:
        if self._rows is None:
            self._rows = tuple(
                GroupPartition(g, t, p, committed, lag, age)
                for ((g, t, p), committed, lag), age in zip(self.lags, self.seconds, strict=True)
            )
        return self._rows


def lag_rows(committed: CommittedLike | None, offsets: OffsetsObservation | None) -> list[LagRow]:
    """``(key, committed, lag)`` of every committed group-partition, unsorted: one per key (the first of
    duplicates wins: a duplicate would make an invalid exposition), ``lag`` None when the log range is
    unknown."""
    return _lag_rows(committed, offsets.log_ends() if offsets else {})


def _lag_rows(committed: CommittedLike | None, ends: Mapping[tuple[str, int], int]) -> list[LagRow]:
    get = ends.get
    return [
        (key, offset, None if (end := get(key[1:])) is None else end - offset)
        for key, offset in _unique(committed).items()
    ]


def wanted_offsets(rows: Iterable[LagRow]) -> set[Wanted]:
    """The (topic, partition, committed + 1) whose log-end crossing time the lagging rows need."""
    return {(t, p, offset + 1) for (_, t, p), offset, lag in rows if lag is not None and lag > 0}


def wanted_of(committed: CommittedLike | None, ends: Mapping[tuple[str, int], int]) -> set[Wanted]:
    """``wanted_offsets(lag_rows(committed, offsets))`` for ``ends = offsets.log_ends()``, without
    building a row per group-partition (most lag nothing)."""
    get = ends.get
    return {
        (t, p, offset + 1)
        for (_, t, p), offset in _unique(committed).items()
        if (end := get((t, p))) is not None and end > offset
    }


def _unique(committed: CommittedLike | None) -> dict[tuple[str, str, int], int]:
    """Each group-partition's committed offset, the first of duplicates winning."""
    if isinstance(committed, CommittedObservation):  # from the offsets backwards: no list of pairs
        offsets = committed.offsets
        return dict(zip(map(_COMMIT_KEY, reversed(offsets)), map(_OFFSET, reversed(offsets)), strict=True))
    return dict(reversed(list(committed.keyed_offsets()))) if committed else {}


def lag_seconds(row: LagRow, reached_at: Mapping[Wanted, float], now: float) -> float | None:
    """Age of the oldest unconsumed message (module docstring); None when it is absent."""
    (_, topic, partition), committed, lag = row
    if lag is None or lag < 0:
        return None
    if lag == 0:
        return 0.0
    at = reached_at.get((topic, partition, committed + 1))
    return None if at is None else max(0.0, now - at)


def seconds_of(lags: Sequence[LagRow], reached: Mapping[Wanted, float], now: float) -> list[float | None]:
    """Each row's lag in seconds, as :func:`lag_seconds` (None: absent), without a call per row."""
    get = reached.get
    return [
        None
        if behind is None or behind < 0
        else 0.0
        if behind == 0
        else None
        if (at := get((topic, partition, offset + 1))) is None
        else max(0.0, now - at)
        for (_, topic, partition), offset, behind in lags
    ]


def assignments(groups: GroupsObservation | None) -> dict[tuple[str, str, int], GroupMember]:
    """(group, topic, partition) -> assigned member; the first member wins if two claim one partition."""
    found: dict[tuple[str, str, int], GroupMember] = {}
    for group in groups.groups if groups else ():
        for member in group.members:
            for tp in member.assignment:
                found.setdefault((group.group_id, tp.topic, tp.partition), member)
    return found


def cluster_view(
    inputs: ClusterInputs, store: LogEndTimes | None, now: float, kept: ViewMemo | None = None
) -> ClusterView:
    """Lag and lag seconds of every committed group-partition of one cluster, sorted by group, topic and
    partition (the member a partition is assigned to: :func:`assignments`, for the families that need
    it). With ``kept`` (the collector's), what the previous renders derived is reused (:class:`ViewMemo`)."""
    c = inputs
    if kept is not None:
        lags, reached = kept.lags_and_reached(c, store)
    else:
        lags = lag_rows(c.committed, c.offsets)
        lags.sort()  # by key: keys are unique
        reached = _reached_at(store, c.cluster, wanted_offsets(lags))
    return ClusterView(c.cluster, c.metadata, c.offsets, c.groups, c.committed, lags, reached, now)


def cluster_views(inputs: ScrapeInputs, now: float, kept: ViewMemo | None = None) -> Sequence[ClusterView]:
    views = [cluster_view(c, inputs.log_end_times, now, kept) for c in inputs.clusters]
    if kept is not None:
        kept.keep({c.cluster for c in inputs.clusters})
    return views


def _reached_at(
    store: LogEndTimes | None, cluster: str, wanted: set[Wanted], failed: list[bool] | None = None
) -> Mapping[Wanted, float]:
    if store is None or not wanted:
        return {}
    try:
        return store.log_end_reached_at_many(cluster, wanted)
    except OffsetguardError as exc:  # a scrape without lag seconds beats a failed scrape
        log.warning("metrics: lag seconds of %s unavailable: %s", cluster, exc)
        if failed is not None:
            failed.append(True)
        return {}


_ROW_KEY = itemgetter(0)
_PARTITION_OF = itemgetter(1, 2)  # of a row's key
_COMMIT_KEY = attrgetter("group", "topic", "partition")
_OFFSET = attrgetter("offset")
INCOMPLETE_REUSE_S = 5.0  # crossings the store did not know are asked again after this (or sooner)


@dataclass(slots=True, eq=False)
class _Held:
    committed: CommittedLike | None
    offsets: OffsetsObservation | None
    lags: list[LagRow]
    reached: Mapping[Wanted, float]
    unanswered_until: float  # monotonic; inf when every wanted crossing is known
    aligned: bool = False  # lags[i] is the row of committed.offsets[i] (sorted, no duplicates)


class ViewMemo:
    """What :func:`cluster_view` derived at the previous render of each cluster, owned by one collector
    (renders are not concurrent: the collector hands a render its memo only while no other holds it).

    Observations are frozen and replaced whole by each collector cycle, so while the committed and
    offsets observations are the same objects, or new ones that hand the same offsets (:func:`_same_rows`),
    the sorted lag rows are the same too; when some moved, and the committed offsets are listed sorted
    with the same keys (as the tail-fed view lists them), only the rows whose commit is another object
    or whose log end moved are derived again (:func:`_moved_rows`). A crossing time, once the store
    knows it, stands while the partition's log end does not fall (a truncation, a re-created
    topic: then the crossing that counts is a later one), so known ones are kept from render to render
    for the rows that still want them, and the store is asked only for the others. An unknown one (the
    store may still be writing the cycle's sample) is asked again with the next offsets or committed
    observation that moved something, or after :data:`INCOMPLETE_REUSE_S` (as
    :class:`service.metrics.snapshot.Compactor`).
    """

    def __init__(self, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._monotonic = monotonic
        self._held: dict[str, _Held] = {}
        self.asked = 0  # crossings asked of the store so far (tests, bench)

    def lags_and_reached(
        self, c: ClusterInputs, store: LogEndTimes | None
    ) -> tuple[list[LagRow], Mapping[Wanted, float]]:
        if store is None:  # nothing to ask, nothing to keep: no lag in seconds (as a fresh render)
            self._held.pop(c.cluster, None)
            lags = lag_rows(c.committed, c.offsets)
            lags.sort()
            return lags, {}
        held = self._held.get(c.cluster)
        aligned = True  # rows from the held ones stay aligned with their offsets
        if held is not None and _same_rows(held, c):
            held.committed, held.offsets = c.committed, c.offsets  # the old ones may go
            if self._monotonic() < held.unanswered_until:
                return held.lags, held.reached
            lags, known, aligned = held.lags, held.reached, held.aligned
        else:
            ends = c.offsets.log_ends() if c.offsets is not None else {}
            moved = _moved_ends(held, c.offsets, ends) if held is not None else {}
            kept = _moved_rows(held, c, ends, moved) if held is not None else None
            if kept is None:
                lags = _lag_rows(c.committed, ends)
                lags.sort()  # by key: keys are unique
                aligned = _aligned(lags, c.committed)
            else:
                lags = kept
            known = _standing(held, ends, moved) if held is not None else {}
        wanted = wanted_offsets(lags)
        found = {k: at for k in wanted if (at := known.get(k)) is not None}
        missing = wanted.difference(found)
        complete = True
        if missing:
            self.asked += len(missing)
            failed: list[bool] = []
            answers = _reached_at(store, c.cluster, missing, failed)
            if failed:  # as a fresh render: no lag seconds this time; what was known stays for the next
                self._held[c.cluster] = _Held(c.committed, c.offsets, lags, found, 0.0, aligned)
                return lags, {}
            found.update(answers)
            complete = len(found) >= len(wanted)
        until = math.inf if complete else self._monotonic() + INCOMPLETE_REUSE_S
        self._held[c.cluster] = _Held(c.committed, c.offsets, lags, found, until, aligned)
        return lags, found

    def keep(self, clusters: set[str]) -> None:
        """Forget the clusters no longer scraped."""
        for name in [n for n in self._held if n not in clusters]:
            del self._held[name]


def _same_rows(held: _Held, c: ClusterInputs) -> bool:
    """Whether ``c`` gives the lag rows ``held`` was derived from: the same observations, or new ones
    with the same contents where that is cheap to tell. The tail-fed committed offsets
    (:mod:`collectors.tail_committed`) hand the same offsets tuple while nothing moved, and the offsets
    collector the same :class:`~collectors.model.PartitionOffsets` for an unchanged partition (the
    tuples then compare by identity, in C)."""
    a, b = held.committed, c.committed
    if a is not b and not (
        isinstance(a, CommittedObservation) and isinstance(b, CommittedObservation) and a.offsets is b.offsets
    ):
        return False
    x, y = held.offsets, c.offsets
    return x is y or (x is not None and y is not None and x.partitions == y.partitions)


def _aligned(lags: list[LagRow], committed: CommittedLike | None) -> bool:
    """Whether ``lags`` (sorted) are the rows of ``committed``'s offsets one for one, in their order (the
    tail-fed committed offsets are listed sorted, with no duplicates)."""
    if not isinstance(committed, CommittedObservation) or len(committed.offsets) != len(lags):
        return False
    return all(map(eq, map(_ROW_KEY, lags), map(_COMMIT_KEY, committed.offsets)))


def _moved_ends(
    held: _Held, offsets: OffsetsObservation | None, ends: Mapping[tuple[str, int], int]
) -> dict[tuple[str, int], int | None]:
    """The partitions whose log end differs between the held offsets and ``offsets`` (``ends``: its log
    ends), one gone from either included, each with its held log end (None: it had none)."""
    if offsets is held.offsets:
        return {}
    before = held.offsets.log_ends() if held.offsets is not None else {}
    get = before.get
    moved = {tp: get(tp) for tp, end in ends.items() if get(tp) != end}
    moved.update((tp, before[tp]) for tp in before.keys() - ends.keys())
    return moved


def _moved_rows(
    held: _Held,
    c: ClusterInputs,
    ends: Mapping[tuple[str, int], int],
    moved: Mapping[tuple[str, int], object],
) -> list[LagRow] | None:
    """``c``'s lag rows from the held ones, when they are aligned with their offsets and ``c``'s offsets
    are as many with the same keys: only the rows whose commit (another object) or log end (``moved``;
    ``ends``: ``c.offsets``' log ends) moved are derived again, the others are the held tuples. None:
    derive all (other keys, or not aligned)."""
    a, b = held.committed, c.committed
    if not (held.aligned and isinstance(a, CommittedObservation) and isinstance(b, CommittedObservation)):
        return None
    old, new = a.offsets, b.offsets
    if len(old) != len(new):
        return None
    lags = list(held.lags)
    get = ends.get
    for i in compress(count(), map(is_not, old, new)):
        o, n = old[i], new[i]
        if o.partition != n.partition or o.topic != n.topic or o.group != n.group:
            return None
        key = lags[i][0]
        end = get((n.topic, n.partition))
        lags[i] = (key, n.offset, None if end is None else end - n.offset)
    if moved:  # the rows on those partitions, found in C
        for i in compress(count(), map(moved.__contains__, map(_PARTITION_OF, map(_ROW_KEY, lags)))):
            key, offset, _ = lags[i]
            end = get(key[1:])
            lags[i] = (key, offset, None if end is None else end - offset)
    return lags


def _standing(
    held: _Held, ends: Mapping[tuple[str, int], int], moved: Mapping[tuple[str, int], int | None]
) -> Mapping[Wanted, float]:
    """The held crossing times whose partition's log end has not fallen since they were given (``ends``:
    the new offsets' log ends; ``moved``: :func:`_moved_ends`)."""
    if not held.reached or not moved:
        return held.reached
    fallen = {
        tp for tp, was in moved.items() if was is not None and (end := ends.get(tp)) is not None and end < was
    }
    if not fallen:
        return held.reached
    return {k: v for k, v in held.reached.items() if (k[0], k[1]) not in fallen}
