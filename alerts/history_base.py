"""What :class:`~alerts.history.RangeHistory` and :class:`~alerts.history.OffsetHistory` share: samples in
arrays, persistent, read as a sequence of named tuples.

Each partition keeps up to ``Thresholds.history_samples`` log-range samples, each group-partition as many
committed-offset samples. As tuples of named tuples a sample cost ~150 bytes (every part a tracked object)
and an append copied the whole tuple: 20,000 moving partitions x 240 samples took 0.7 GB. Here samples
live in two arrays (times, then each sample's values): 24 bytes a range sample, 16 an offset sample, and
an amortised O(1) append.

A history is a read-only :class:`~collections.abc.Sequence` of the same named tuples, equal to the tuple
of its samples, and persistent: :meth:`appended`, :meth:`with_last` and :meth:`trimmed` return new
histories. Histories share arrays; one sees only its slice ``[lo, hi)`` plus its newest samples, held
outside the arrays. Appending writes past ``hi`` in place only if no other history wrote there (the
arrays end at ``hi``), else it copies its slice: an old state stays valid, and unchanged for a thread
reading it, while the next one is built from it.
"""

from __future__ import annotations

import base64
import binascii
import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, ClassVar, Generic, TypeVar, overload

from alerts.state import OffsetSample, RangeSample

S = TypeVar("S", RangeSample, OffsetSample)
H = TypeVar("H", bound="History[Any]")

_COMPACT_AFTER = 32  # a dead prefix longer than this and than the live part is dropped by copying

# The arrays of every history with nothing stored in them: never written (:meth:`History.appended` starts
# arrays of its own instead). A history of one or two samples keeps them outside the arrays (``_prev``,
# ``_last``): an idle partition's (its run's two ends) and an idle group-partition's (its offset, then
# how long it stayed). Two arrays a key cost ~160 bytes: 11 MB at 20k partitions / 50k group-partitions.
_NO_AT: array[float] = array("d")
_NO_VALUES: array[int] = array("q")


class History(Sequence[S], Generic[S]):
    __slots__ = ("_at", "_cap", "_hi", "_last", "_lo", "_ordered", "_prev", "_values")
    _width: ClassVar[int]  # values per sample
    _at: array[float]
    _values: array[int]
    _lo: int
    _hi: int
    # The newest samples, outside the arrays: ``_last`` (None only when empty) and, after plus(), ``_prev``
    # before it. Two fields rather than a tuple: an idle partition's history is rebuilt every cycle, and
    # each object allocated there is one more for the garbage collector's young generation.
    _prev: S | None
    _last: S | None
    _ordered: bool  # the arrays' samples [lo, hi) are in time order
    # At least the largest first value (a log start, an offset) of the arrays' samples [lo, hi), None if
    # not known: RangeHistory.may_be_out_of_range asks whether any log start passed an offset, and a log
    # start under every committed offset (the common case) is answered without a walk over the samples.
    _cap: int | None

    def __init__(
        self,
        at: array[float],
        values: array[int],
        lo: int,
        hi: int,
        prev: S | None,
        last: S | None,
        ordered: bool,
        cap: int | None = None,
    ) -> None:
        self._at = at
        self._values = values
        self._lo = lo
        self._hi = hi
        self._prev = prev
        self._last = last
        self._ordered = ordered
        self._cap = cap

    @property
    def _tail(self) -> tuple[S, ...]:
        prev, last = self._prev, self._last
        if last is None:
            return ()
        return (last,) if prev is None else (prev, last)

    # -- building ---------------------------------------------------------------------------------------

    @classmethod
    def _small(cls: type[H], prev: S | None, last: S | None) -> H:
        """A history of at most two samples: both outside the arrays, on the shared empty ones."""
        return cls(_NO_AT, _NO_VALUES, 0, 0, prev, last, True)

    @classmethod
    def of(cls: type[H], samples: Iterable[Any]) -> H:
        """The history of ``samples`` (oldest first); ``samples`` itself when it already is one."""
        if isinstance(samples, cls):
            return samples
        items = [cls._sample(s) for s in samples]
        if not items:
            return cls._small(None, None)
        if len(items) <= 2:
            return cls._small(items[-2] if len(items) == 2 else None, items[-1])
        at = array("d", [s[0] for s in items[:-1]])
        values = array("q", [v for s in items[:-1] for v in s[1:]])
        cap = max(values[:: cls._width]) if len(at) else None
        return cls(at, values, 0, len(at), None, items[-1], _in_order(at), cap)

    def appended(self: H, sample: S, keep: int) -> H:
        """This history with ``sample`` added as the newest, then only the newest ``keep`` kept."""
        prev, last = self._prev, self._last
        if last is None:
            return self._small(None, sample)
        at, values, lo, hi, w = self._at, self._values, self._lo, self._hi, self._width
        if prev is None and hi == lo and keep > 1:  # two samples: both outside the arrays
            return self._small(last, sample)
        # _tail_follows, inline: every moving partition and group-partition appends every cycle
        first = last if prev is None else prev
        ordered = self._ordered and not (
            (prev is not None and last[0] < prev[0]) or (hi > lo and first[0] < at[hi - 1])
        )
        if len(at) != hi or at is _NO_AT:  # another history wrote past our end (or none of its own)
            # continue on a copy of our slice
            at, values, lo, hi = at[lo:hi], values[lo * w : hi * w], 0, hi - lo
        cap = self._cap
        if cap is None and hi > lo:
            cap = max(values[lo * w : hi * w : w])  # once (a history decoded at a start)
        if prev is not None:
            at.append(prev[0])
            values.extend(prev[1:])
            hi += 1
            if cap is None or prev[1] > cap:
                cap = prev[1]
        at.append(last[0])
        values.extend(last[1:])
        hi += 1
        if cap is None or last[1] > cap:
            cap = last[1]
        floor = hi + 1 - (keep if keep > 1 else 1)
        if floor > lo:
            lo = floor
        if lo > _COMPACT_AFTER and lo > hi - lo:
            at, values, lo, hi = at[lo:hi], values[lo * w : hi * w], 0, hi - lo
        return type(self)(at, values, lo, hi, None, sample, ordered, cap)

    def with_last(self: H, sample: S) -> H:
        """This history with its newest sample replaced by ``sample`` (added if empty)."""
        return type(self)(
            self._at, self._values, self._lo, self._hi, self._prev, sample, self._ordered, self._cap
        )

    def plus(self: H, sample: S) -> H:
        """This history with ``sample`` added as the newest, nothing trimmed and nothing written to the
        shared arrays (a cycle's look at the history with its current observation)."""
        if self._prev is None:
            return type(self)(
                self._at, self._values, self._lo, self._hi, self._last, sample, self._ordered, self._cap
            )
        return type(self).of([*self, sample])  # a look at a look: a copy

    def trimmed(self: H, keep: int) -> H:
        """Only the newest ``keep`` samples (at least one)."""
        drop = len(self) - max(1, keep)
        if drop <= 0:
            return self
        stored = self._hi - self._lo
        if drop <= stored:
            return type(self)(
                self._at,
                self._values,
                self._lo + drop,
                self._hi,
                self._prev,
                self._last,
                self._ordered,
                self._cap,
            )
        # keep >= 1 and _prev exists only beside _last: only _prev is left to drop
        return type(self)(self._at, self._values, self._hi, self._hi, None, self._last, True)

    # -- reading ----------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._hi - self._lo + (self._prev is not None) + (self._last is not None)

    @overload
    def __getitem__(self, index: int) -> S: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[S, ...]: ...

    def __getitem__(self, index: int | slice) -> S | tuple[S, ...]:
        if index == -1 and self._last is not None:
            return self._last  # the common question: the newest sample
        stored = self._hi - self._lo
        n = len(self)
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(n)))
        i = index + n if index < 0 else index
        if not 0 <= i < n:
            raise IndexError("history index out of range")
        if i >= stored:
            return self._tail[i - stored]
        return self._at_arrays(self._at, self._values, self._lo + i)

    def __iter__(self) -> Iterator[S]:
        yield from self._stored()
        yield from self._tail

    def __eq__(self, other: object) -> bool:
        if isinstance(other, History | tuple | list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to a tuple, mutable-free but not hashed like one

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"

    # -- saving -----------------------------------------------------------------------------------------

    def encoded(self) -> list[str]:
        """``[times, values]``: the samples' arrays, little-endian and base64 (the state codec's form)."""
        lo, hi, w = self._lo, self._hi, self._width
        at, values = self._at[lo:hi], self._values[lo * w : hi * w]
        for s in self._tail:
            at.append(s[0])
            values.extend(s[1:])
        if sys.byteorder != "little":
            at.byteswap()
            values.byteswap()
        return [base64.b64encode(at.tobytes()).decode(), base64.b64encode(values.tobytes()).decode()]

    @classmethod
    def decoded(cls: type[H], encoded: Sequence[str]) -> H:
        """The history :meth:`encoded` wrote. Raises ``ValueError`` on a malformed body."""
        if len(encoded) != 2:
            raise ValueError(f"a history is two arrays, not {len(encoded)}")
        at, values = array("d"), array("q")
        # base64.b64decode(validate=True) without its wrapping: a restart decodes 70,000 histories
        at.frombytes(binascii.a2b_base64(encoded[0], strict_mode=True))
        values.frombytes(binascii.a2b_base64(encoded[1], strict_mode=True))
        if sys.byteorder != "little":
            at.byteswap()
            values.byteswap()
        n = len(at)
        if len(values) != n * cls._width:
            raise ValueError(f"{len(values)} values for {n} samples of {cls._width}")
        if n == 0:
            return cls._small(None, None)
        if n <= 2:  # the common case (an idle key): its samples outside the arrays, no arrays of its own
            prev = cls._at_arrays(at, values, 0) if n == 2 else None
            return cls._small(prev, cls._at_arrays(at, values, n - 1))
        return cls(at, values, 0, n - 1, None, cls._at_arrays(at, values, n - 1), _in_order(at))

    def _tail_follows(self) -> bool:
        """The samples outside the arrays are in time order and none is older than the arrays' newest."""
        first, last, hi = self._prev, self._last, self._hi
        if last is None:
            return True
        if first is None:
            first = last
        elif last[0] < first[0]:
            return False
        return not (hi > self._lo and first[0] < self._at[hi - 1])

    def _stored(self) -> Iterator[S]:
        raise NotImplementedError

    @staticmethod
    def _at_arrays(at: array[float], values: array[int], j: int) -> Any:
        raise NotImplementedError

    @staticmethod
    def _sample(s: Any) -> Any:
        raise NotImplementedError


def _in_order(at: array[float]) -> bool:
    return (times := at.tolist()) == sorted(times)  # in C: a pairwise walk cost a restart ~0.5 s
