"""What only the active replica runs (issue 46), started at promotion and stopped at step-down.

The collectors run on every replica (a standby's ``/metrics`` stays warm from memory); their history
writes are skipped on a standby (:func:`gated_sink`). The writers here are the rest: each cluster's
``__consumer_offsets`` tail (a fresh one per promotion, so that it resumes from the positions the store
holds, those of the replica that was active before: commits since its last checkpoint are evaluated
again), each cluster's detection loop (launched: it loads the saved state, like a restart; snapshots are
its own) and the notification dispatcher.

Tail positions and history rows are written through :class:`store.Store`, whose writer the fencing guard
does not cover; they are written only while :meth:`Leadership.may_write` holds (the lease held and its
local monotonic deadline not passed, as for a send). A woken replica therefore writes none; what a
replica writes in the instant it loses the lease is a position or a history sample, which the next
active replica's writes supersede.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any

from collectors.errors import FencedError
from collectors.tail import OffsetsTail
from collectors.tail_model import PositionStore, StoredPosition
from service.detection import DetectionLoop
from service.notify.dispatcher import Dispatcher
from service.scheduler import Sink

log = logging.getLogger(__name__)


class GatedPositions:
    """The tail's :class:`PositionStore`: reads always, writes only while ``may_write()``."""

    def __init__(self, store: PositionStore, may_write: Callable[[], bool]) -> None:
        self._store = store
        self._may_write = may_write

    def tail_positions(self, cluster: str) -> Sequence[StoredPosition]:
        return self._store.tail_positions(cluster)

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
    ) -> None:
        self._tails = tails
        self._make_tails = list(make_tails)
        self._detections = list(detections)
        self._notifier = notifier
        self.running = False

    async def promote(self, epoch: int) -> None:
        if self._notifier is not None:
            await self._notifier.start()
        self._tails[:] = [make() for make in self._make_tails]
        for tail in self._tails:
            tail.start()
        for detection in self._detections:
            detection.launch()  # loads the saved state in the background; events arriving meanwhile wait
        self.running = True

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
        await asyncio.gather(*(tail.stop() for tail in self._tails))
        await asyncio.gather(*(detection.stop() for detection in self._detections))
        if self._notifier is not None:
            await self._notifier.stop()
