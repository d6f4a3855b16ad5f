"""What only the active replica runs (issue 46), started at promotion and stopped at step-down.

The collectors run on every replica (a standby's ``/metrics`` stays warm from memory); their history
writes are skipped on a standby (:func:`gated_sink`). The writers here are the rest: each cluster's
detection loop (snapshots are its own), its ``__consumer_offsets`` tail and the notification dispatcher.

At promotion detection loads the saved state first, like a restart; then a fresh tail starts **from the
positions that state has evaluated** (the last offset it saw per ``__consumer_offsets`` partition, plus
one), not from the tail's own checkpoints: the replica that was active saved its state every
``detection.state_save_seconds`` but checkpointed its tail every second, so resuming from the checkpoints
would skip the commits between its last save and its death (detection would compare a rewind against an
older offset, or miss it). Replaying them costs at most one save interval of commits; those the state has
seen already are dropped by detection. A partition the state has no position for resumes from the stored
checkpoint, as a single replica's restart does; without a saved state (the active replica died before its
first save) the tail reads from ``tail.start_from`` again, as at a first start.

Tail positions and history rows are written through :class:`store.Store`, whose writer the fencing guard
does not cover; they are written only while :meth:`Leadership.may_write` holds (the lease held and its
local monotonic deadline not passed, as for a send). A woken replica therefore writes none; what a
replica writes in the instant it loses the lease is a position or a history sample, which the next
active replica's writes supersede.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from collectors.errors import FencedError, OffsetguardError
from collectors.tail import OffsetsTail
from collectors.tail_model import PositionStore, StoredPosition
from service.detection import DetectionLoop
from service.notify.dispatcher import Dispatcher
from service.scheduler import Sink

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Position:
    partition: int
    next_offset: int


class GatedPositions:
    """The tail's :class:`PositionStore`: positions from ``evaluated()`` (the detection state's, once
    loaded) over the stored checkpoints; writes only while ``may_write()``."""

    def __init__(
        self,
        store: PositionStore,
        may_write: Callable[[], bool],
        evaluated: Callable[[], Mapping[int, int]] = dict,
    ) -> None:
        self._store = store
        self._may_write = may_write
        self._evaluated = evaluated

    def tail_positions(self, cluster: str) -> Sequence[StoredPosition]:
        evaluated = self._evaluated()
        if not evaluated:  # no saved state yet: everything is read again, as at a first start
            return []
        positions = {row.partition: row.next_offset for row in self._store.tail_positions(cluster)}
        positions.update({p: last + 1 for p, last in evaluated.items()})
        return [Position(p, offset) for p, offset in sorted(positions.items())]

    def set_tail_position(self, cluster: str, partition: int, next_offset: int, updated_at: float) -> None:
        if not self._may_write():
            raise FencedError("tail position not saved: this replica does not hold the leader lease")
        self._store.set_tail_position(cluster, partition, next_offset, updated_at)


def gated_sink(sink: Sink, may_write: Callable[[], bool]) -> Sink:
    """``sink`` (the store's history writer) on the active replica only."""

    async def gated(observation: Any) -> None:
        if may_write():
            await sink(observation)

    return gated


class ActiveWriters:
    """The runtime's writers; ``tails`` is the runtime's own list, refilled at each promotion with tails
    made by ``make_tails`` (one per cluster)."""

    def __init__(
        self,
        *,
        tails: list[OffsetsTail],
        make_tails: Sequence[Callable[[], OffsetsTail]],
        detections: Sequence[DetectionLoop],
        notifier: Dispatcher | None,
        refresh: Callable[[], None] | None = None,
        load_timeout: float = 60.0,
    ) -> None:
        self._refresh = refresh  # what the store keeps beside the database, read again at promotion
        self._load_timeout = load_timeout
        self._tails = tails
        self._make_tails = list(make_tails)
        self._detections = list(detections)
        self._notifier = notifier
        self.running = False

    async def promote(self, epoch: int) -> None:
        """The store's latest values read again (the replica active before wrote history meanwhile),
        detection (its saved state loaded, at most ``load_timeout`` each), then the tails from the
        positions that state evaluated, then the dispatcher. Detection evaluates once its tail has caught
        up (at most ``load_timeout`` later): the commits replayed come before any poll's view of now."""
        if self._refresh is not None:
            try:
                await asyncio.to_thread(self._refresh)
            except OffsetguardError as exc:  # the history writers reload at their next write on PostgreSQL
                log.warning("ha: the store's latest values not read again at promotion: %s", exc)
        self._tails[:] = []
        for detection in self._detections:
            if self._make_tails:  # its first evaluation waits for the tail's replay (DetectionLoop.hold)
                detection.hold(self._caught_up(detection.cluster), self._load_timeout)
            try:
                await asyncio.wait_for(asyncio.shield(detection.start()), self._load_timeout)
            except TimeoutError:  # the store is slow or failing: the tail resumes from the checkpoints
                log.warning("ha: %s: state not loaded in time, the tail resumes from its checkpoints",
                            detection.cluster)  # fmt: skip
        self._tails[:] = [make() for make in self._make_tails]
        for tail in self._tails:
            tail.start()
        if self._notifier is not None:
            await self._notifier.start()
        self.running = True

    def _caught_up(self, cluster: str) -> Callable[[], bool]:
        return lambda: any(t.cluster == cluster and t.caught_up for t in self._tails)

    async def demote(self) -> None:
        """At once, saving nothing: the dispatcher, then the tails, then detection."""
        self.running = False
        if self._notifier is not None:
            await self._notifier.halt()
        await asyncio.gather(*(tail.stop() for tail in self._tails))
        await asyncio.gather(*(detection.halt() for detection in self._detections))

    async def retire(self) -> None:
        """A clean stop while still holding the lease, in a single replica's order: the tails (their
        positions saved), detection (what is queued evaluated, the state saved), the dispatcher."""
        self.running = False
        for detection in self._detections:
            detection.tail_stopping()  # what it evaluates at stop is judged with the tail as it was
        await asyncio.gather(*(tail.stop() for tail in self._tails))
        await asyncio.gather(*(detection.stop() for detection in self._detections))
        if self._notifier is not None:
            await self._notifier.stop()
