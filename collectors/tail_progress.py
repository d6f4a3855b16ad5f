"""Bookkeeping of the tail: delivered and saved positions, end offsets, the caught-up latch and counters;
plus its retry backoff and the GC tuning it needs for throughput.

:class:`TailProgress` is pure (no I/O, no clock of its own): :class:`collectors.tail.OffsetsTail` feeds
it what happened and when, and reads :class:`collectors.tail_model.TailFigures` snapshots from it.
"""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Iterable, Mapping

from collectors.tail_model import TailFigures

RATE_WINDOW_S = 10.0
RATE_SAMPLE_S = 0.25
GC_GEN0_THRESHOLD = 10_000


def tune_gc(gen0: int = GC_GEN0_THRESHOLD) -> None:
    """Raise the cyclic GC's generation-0 threshold, process wide (never lowers it).

    Each record leaves ~3 GC-tracked objects alive until its batch is handed on; at the default
    threshold (700) the collector runs every few hundred records and took a third of the tail's CPU
    (measured on the decode loop: 210k -> 285k records/s). Called by the service when tails run.
    """
    first, second, third = gc.get_threshold()
    if first < gen0:
        gc.set_threshold(gen0, second, third)


class Backoff:
    """Exponential backoff between ``first`` and ``cap`` seconds; :meth:`reset` after a success."""

    def __init__(self, first: float = 0.5, cap: float = 10.0) -> None:
        self.first, self.cap = first, cap
        self._next = first

    def next(self) -> float:
        delay, self._next = self._next, min(self.cap, self._next * 2)
        return delay

    def reset(self) -> None:
        self._next = self.first


class RateMeter:
    """Recent rate of a growing total: the slope over the last ``window`` seconds of samples."""

    def __init__(self, window: float = RATE_WINDOW_S, sample_every: float = RATE_SAMPLE_S) -> None:
        self._window = window
        self._every = sample_every
        self._samples: deque[tuple[float, int]] = deque()

    def sample(self, now: float, total: int) -> None:
        samples = self._samples
        if samples and now - samples[-1][0] < self._every:
            return
        samples.append((now, total))
        while len(samples) > 2 and now - samples[1][0] >= self._window:
            samples.popleft()

    def rate(self, now: float, total: int) -> float:
        """Per-second rate up to ``now`` (0 until two instants are known)."""
        if not self._samples:
            return 0.0
        t0, n0 = self._samples[0]
        span = now - t0
        return (total - n0) / span if span > 0 else 0.0


class TailProgress:
    """Where the tail stands per partition; ``delivered`` only moves once the sink has the events."""

    def __init__(self) -> None:
        self.partitions: tuple[int, ...] = ()
        self.delivered: dict[int, int] = {}  # next offset after the events the sink has received
        self.saved: dict[int, int] = {}  # what the store holds
        self.targets: dict[int, int] | None = None  # end offsets seen at start: caught up once reached
        self.ends: dict[int, int] = {}  # latest known end offsets (for lag)
        self.caught_up = False
        self.records_total = 0
        self.events_total = 0
        self.unknown_records = 0
        self.out_of_scope_records = 0  # records of groups/topics out of scope, dropped undecoded
        self.decode_errors = 0
        self.fetch_errors = 0
        self.last_error: str | None = None
        self.last_checkpoint_at: float | None = None
        self.rate = RateMeter()

    def set_partitions(self, partitions: Iterable[int]) -> None:
        self.partitions = tuple(partitions)

    def set_stored(self, stored: Mapping[int, int]) -> None:
        """Positions read back from the store (so unchanged ones are not written again)."""
        self.saved.update(stored)

    def set_targets(self, ends: Mapping[int, int]) -> None:
        """The end offsets at start; only the first call counts (a reconnect does not move the goal)."""
        if self.targets is None:
            self.targets = dict(ends)
        self.update_ends(ends)
        self._check_caught_up()

    def nothing_to_catch_up(self) -> None:
        """``__consumer_offsets`` does not exist yet: there is no history to wait for."""
        if self.targets is None:
            self.caught_up = True

    def update_ends(self, ends: Mapping[int, int]) -> None:
        self.ends.update(ends)

    def deliver(self, positions: Mapping[int, int]) -> None:
        """The sink has everything before ``positions`` (also used for the positions right after a seek)."""
        self.delivered.update(positions)
        if not self.caught_up:
            self._check_caught_up()

    def count(self, records: int, events: int, unknown: int, out_of_scope: int = 0) -> None:
        self.records_total += records
        self.events_total += events
        self.unknown_records += unknown
        self.out_of_scope_records += out_of_scope

    def failed(self, error: BaseException) -> None:
        self.fetch_errors += 1
        self.last_error = f"{type(error).__name__}: {error}"

    def unsaved(self) -> dict[int, int]:
        """Delivered positions the store does not have yet."""
        saved = self.saved
        return {p: n for p, n in self.delivered.items() if saved.get(p) != n}

    def mark_saved(self, positions: Mapping[int, int], at: float) -> None:
        self.saved.update(positions)
        self.last_checkpoint_at = at

    def lag(self) -> dict[int, int]:
        """Per partition: known end offset minus delivered position (never negative)."""
        delivered = self.delivered
        return {p: max(0, end - delivered[p]) for p, end in self.ends.items() if p in delivered}

    def _check_caught_up(self) -> None:
        targets = self.targets
        if targets is None:
            return
        delivered = self.delivered
        if all(delivered.get(p, -1) >= end for p, end in targets.items()):
            self.caught_up = True

    def figures(self, cluster: str, state: str, now: float) -> TailFigures:
        return TailFigures(
            cluster=cluster,
            state=state,
            caught_up=self.caught_up,
            partitions=len(self.partitions),
            records_total=self.records_total,
            events_total=self.events_total,
            records_per_second=self.rate.rate(now, self.records_total),
            lag=self.lag(),
            unknown_records=self.unknown_records,
            out_of_scope_records=self.out_of_scope_records,
            decode_errors=self.decode_errors,
            fetch_errors=self.fetch_errors,
            last_error=self.last_error,
            last_checkpoint_at=self.last_checkpoint_at,
        )
