"""Sample histories kept compactly: :class:`RangeHistory` and :class:`OffsetHistory` (the arrays and the
persistence they share: :mod:`alerts.history_base`)."""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from itertools import repeat
from typing import Any

from alerts.history_base import History
from alerts.state import (
    CommitKey,
    CommitPoint,
    OffsetSample,
    PartitionKey,
    PartitionPoint,
    PartitionsSeen,
    RangeSample,
)


class RangeHistory(History[RangeSample]):
    """A partition's log-range samples, oldest first."""

    __slots__ = ()
    _width = 2

    def _stored(self) -> Iterator[RangeSample]:
        lo, hi, v = self._lo, self._hi, self._values
        # tuple.__new__ builds each named tuple in C (its Python constructor costs 5x as much)
        rows = zip(self._at[lo:hi], v[2 * lo : 2 * hi : 2], v[2 * lo + 1 : 2 * hi : 2], strict=True)
        return map(tuple.__new__, repeat(RangeSample), rows)

    def ranged(self, sample: RangeSample, keep: int) -> RangeHistory:
        """:meth:`appended`, except that a run of samples with the same range keeps only its first and
        last: when the two newest have ``sample``'s range, ``sample`` replaces the newest (nothing copied).
        """
        last = self._last
        if last is not None and last[1] == sample[1] and last[2] == sample[2] and self._run():
            return RangeHistory(
                self._at, self._values, self._lo, self._hi, self._prev, sample, self._ordered, self._cap
            )
        return self.appended(sample, keep)

    def extended(self, at: float, log_start: int, log_end: int) -> RangeHistory:
        """This history as :meth:`ranged` would have left it had it taken every later observation of the
        range ``log_start``..``log_end`` up to ``at``: when its two newest samples are a run of that range
        and ``at`` is later than the newest, the newest moves to ``at``; otherwise itself. (The state keeps
        an idle partition's history as it was when its range last stopped changing: :func:`fold_ranges`.)"""
        last = self._last
        if last is None or at <= last[0] or last[1] != log_start or last[2] != log_end or not self._run():
            return self
        return RangeHistory(
            self._at,
            self._values,
            self._lo,
            self._hi,
            self._prev,
            tuple.__new__(RangeSample, (at, log_start, log_end)),
            self._ordered,
            self._cap,
        )

    def _run(self) -> bool:
        """The two newest samples have the same range."""
        last, prev = self._last, self._prev
        if last is None:
            return False
        if prev is not None:
            return prev[1] == last[1] and prev[2] == last[2]
        j, v = self._hi - 1, self._values
        return j >= self._lo and v[2 * j] == last[1] and v[2 * j + 1] == last[2]

    def may_be_out_of_range(self, offset: int, committed_at: float, moved_after: float) -> bool:
        """False when no sample can make :func:`alerts.current.out_of_range_reason` answer: none taken
        by ``moved_after`` has a log start above ``offset``, none taken from ``committed_at`` on a log
        end below it. Found by bisection while the samples are in time order (they are appended as
        observed), so a cycle in which every group commits costs no walk over every history."""
        lo, hi, at, v = self._lo, self._hi, self._at, self._values
        if not (self._ordered and self._tail_follows()):
            return True  # out of time order (a clock stepped back): the caller walks every sample
        before = bisect_right(at, moved_after, lo, hi)
        if (
            before > lo
            and (self._cap is None or self._cap > offset)
            and max(v[2 * lo : 2 * before : 2]) > offset
        ):
            return True
        after = bisect_left(at, committed_at, lo, hi)
        if after < hi and min(v[2 * after + 1 : 2 * hi : 2]) < offset:
            return True
        # the samples outside the arrays, read from their fields (no tuple of them, no generator)
        for s in (self._prev, self._last):
            if s is not None and (
                (s[0] <= moved_after and offset < s[1]) or (s[0] >= committed_at and offset > s[2])
            ):
                return True
        return False

    @staticmethod
    def _at_arrays(at: array[float], values: array[int], j: int) -> RangeSample:
        return tuple.__new__(RangeSample, (at[j], values[2 * j], values[2 * j + 1]))

    @staticmethod
    def _sample(s: Any) -> RangeSample:
        return s if isinstance(s, RangeSample) else RangeSample(*s)


class OffsetHistory(History[OffsetSample]):
    """A group-partition's committed-offset samples, oldest first."""

    __slots__ = ()
    _width = 1

    def _stored(self) -> Iterator[OffsetSample]:
        lo, hi = self._lo, self._hi
        rows = zip(self._at[lo:hi], self._values[lo:hi], strict=True)
        return map(tuple.__new__, repeat(OffsetSample), rows)

    def sampled(self, now: float, offset: int, keep: int, spacing: float) -> OffsetHistory:
        """``(now, offset)`` folded in as :func:`alerts.advance._sampled` says, read in place: a sweep asks
        it of every group-partition, and most are idle (their newest sample neither built nor copied)."""
        last = self._last
        if last is None:
            return self.appended(tuple.__new__(OffsetSample, (now, offset)), keep)
        prev = self._prev
        hi = self._hi
        if prev is not None:
            second_at: float | None = prev[0]
            second_offset: int | None = prev[1]
        elif hi > self._lo:
            second_at, second_offset = self._at[hi - 1], self._values[hi - 1]
        else:
            second_at = second_offset = None
        sample = tuple.__new__(OffsetSample, (now, offset))
        if last[1] == offset:
            if spacing > 0 and now - last[0] < spacing:
                return self
            if second_offset == offset:
                return OffsetHistory(
                    self._at, self._values, self._lo, hi, prev, sample, self._ordered, self._cap
                )
        if spacing > 0 and keep >= 3 and second_at is not None and last[0] - second_at < spacing:
            lo = self._lo
            if hi - lo + (prev is not None) + 1 <= keep - 1:  # with_last(sample) trims nothing: built here
                return OffsetHistory(self._at, self._values, lo, hi, prev, sample, self._ordered, self._cap)
            return self.with_last(sample).trimmed(keep - 1)
        return self.appended(sample, keep)

    @staticmethod
    def _at_arrays(at: array[float], values: array[int], j: int) -> OffsetSample:
        return tuple.__new__(OffsetSample, (at[j], values[j]))

    @staticmethod
    def _sample(s: Any) -> OffsetSample:
        return s if isinstance(s, OffsetSample) else OffsetSample(*s)


def sampled_each(
    histories: Mapping[CommitKey, Sequence[OffsetSample]],
    commits: Mapping[CommitKey, CommitPoint],
    now: float,
    keep: int,
    spacing: float,
    other: Callable[[Sequence[OffsetSample], float, int, int, float], Sequence[OffsetSample]],
) -> dict[CommitKey, Sequence[OffsetSample]]:
    """Each group-partition of ``commits`` with its history (in ``histories``) and its offset at ``now``
    folded in, as :meth:`OffsetHistory.sampled` folds it (``other``: for a history that is none yet, or
    missing, as ``()``): what a sweep does to every group-partition. A history whose newest sample has the
    offset and is less than ``spacing`` old stays as it is, told apart here without a call: most of
    50,000 at most sweeps."""
    history_of = histories.get
    out: dict[CommitKey, Sequence[OffsetSample]] = {}
    for key, point in commits.items():
        kept = history_of(key)
        if type(kept) is OffsetHistory:
            last = kept._last
            offset = point.offset
            if last is not None and last[1] == offset and spacing > 0 and now - last[0] < spacing:
                out[key] = kept  # what sampled() answers then
            else:
                out[key] = kept.sampled(now, offset, keep, spacing)
        else:
            out[key] = other(kept or (), now, point.offset, keep, spacing)
    return out


def through(history: Sequence[RangeSample] | None, point: PartitionPoint | None, at: float) -> RangeHistory:
    """``history`` (a partition's, as the state keeps it) with its newest sample at ``point``'s observation
    (``at``) when that one only continued the run of its range (:meth:`RangeHistory.extended`): the
    history every reader of :attr:`~alerts.state.DetectionState.ranges` means
    (:func:`alerts.current.range_history`)."""
    out = RangeHistory.of(history or ())
    if point is None or point.log_start is None or point.log_end is None:
        return out
    return out.extended(at, point.log_start, point.log_end)


def fold_ranges(
    ranges: dict[PartitionKey, Sequence[RangeSample]],
    points: Mapping[PartitionKey, PartitionPoint],
    at: float,
    before: Mapping[PartitionKey, PartitionPoint],
    seen: PartitionsSeen,
    keep: int,
    rewrite: Container[PartitionKey],
    only: Iterable[PartitionKey] | None = None,
) -> None:
    """Each partition's point of an offsets observation (``points``, every one with its log range, observed
    at ``at``) folded into its history in ``ranges`` (the next state's copy, changed in place), as
    :meth:`RangeHistory.ranged` folds a sample.

    A history whose two newest samples are already a run of the point's range is left as it is: that run
    goes on to the partition's point, kept beside it in the state (:func:`through` reads them together):
    an idle partition, most of 20,000, costs a few comparisons and no new history. Any other history is
    first carried to its partition's point of ``before`` (the previous state's, observed when ``seen``
    says: the run's end as last observed), then given the sample. ``rewrite``: the partitions whose point
    the next state will not keep (:func:`alerts.advance.advance`'s unconfirmed ones), always folded.
    ``only``: the partitions whose history may not be such a run of its point's range (the rest of
    ``points`` are left as they are), if known.
    """
    get = ranges.get
    prior = before.get
    pairs = points.items() if only is None else [(k, points[k]) for k in only if k in points]
    for key, p in pairs:
        start, end = p.log_start, p.log_end
        hist = get(key)
        if type(hist) is RangeHistory:
            # RangeHistory._run inline, for the idle partition: no call, nothing built
            last = hist._last
            if last is not None and last[1] == start and last[2] == end and key not in rewrite:
                prev = hist._prev
                if prev is not None:
                    if prev[1] == start and prev[2] == end:
                        continue
                else:
                    j, v = hist._hi - 1, hist._values
                    if j >= hist._lo and v[2 * j] == start and v[2 * j + 1] == end:
                        continue
        was = prior(key)
        ranges[key] = carried(hist, was, seen.of(key) if was is not None else at, p, at, keep)


def carried(
    history: Sequence[RangeSample] | None,
    before: PartitionPoint | None,
    before_at: float,
    point: PartitionPoint,
    at: float,
    keep: int,
) -> RangeHistory:
    """``history`` carried to ``before`` (its partition's previous point, observed at ``before_at``:
    :func:`through`), then given ``point``'s range (which it must have) as a sample observed at ``at``
    (:meth:`RangeHistory.ranged`)."""
    sample = tuple.__new__(RangeSample, (at, point.log_start, point.log_end))
    return through(history, before, before_at).ranged(sample, keep)
