"""The store's history writes held back while the service makes its first picture.

A service starting on a fresh store writes every partition's and group-partition's first row (20,000 and
50,000 at 20k partitions, a few hundred milliseconds of interpreter time, more at 50k), and on any store the
first writes compare every value: CPU the first collections, the HTTP app's imports and the first render
would otherwise share, which delays the first complete ``/metrics`` by as much. Held, those writes run once
the first picture is served (:meth:`service.runtime.Runtime.first_picture_served`), in the order their
observations arrived, and every write after them waits for them. A collector's run does not wait for its
held write: its observation is in the cache (the sink before this one) and its run is done.

Nothing is lost: :meth:`HeldWrites.flush` (the runtime's stop) releases and finishes them before the store
closes, and the wait for the picture is bounded by whoever arms the hold.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger(__name__)

Write = Callable[[Any], Awaitable[None]]


class HeldWrites:
    """A sink (the store's history writer ``write``) whose writes wait for ``until`` once :meth:`hold`
    armed it; unarmed, or once ``until`` returned (or failed), it writes at once."""

    def __init__(self, write: Write) -> None:
        self._write = write
        self._until: Callable[[], Awaitable[object]] | None = None
        self._held: deque[Any] = deque()  # observations waiting, oldest first
        self._draining: asyncio.Task[None] | None = None
        self._released = asyncio.Event()

    @property
    def held(self) -> int:
        """Observations waiting for their write."""
        return len(self._held)

    def hold(self, until: Callable[[], Awaitable[object]]) -> None:
        """From now until ``until`` returns, writes wait (a second call before that changes nothing)."""
        if self._until is None and not self._released.is_set():
            self._until = until

    async def __call__(self, observation: Any) -> None:
        if self._until is None or self._released.is_set():
            draining = self._draining
            if draining is not None and not draining.done():
                await asyncio.shield(draining)  # after the held ones, in arrival order
            await self._write(observation)
            return
        self._held.append(observation)
        if self._draining is None:
            self._draining = asyncio.get_running_loop().create_task(self._drain(self._until))

    async def _drain(self, until: Callable[[], Awaitable[object]]) -> None:
        released = asyncio.ensure_future(self._released.wait())
        waited = asyncio.ensure_future(until())
        try:
            await asyncio.wait((released, waited), return_when=asyncio.FIRST_COMPLETED)
            if waited.done() and not waited.cancelled() and waited.exception() is not None:
                log.warning(
                    "store writes held for the first picture: the wait failed, writing now: %r",
                    waited.exception(),
                )
        finally:
            for waiting in (released, waited):
                waiting.cancel()
            self._released.set()
        while self._held:
            observation = self._held.popleft()
            try:
                await self._write(observation)
            except Exception:  # a bug must not stop the writes after it (store failures: store_sink)
                log.exception("a held store write failed")

    async def flush(self) -> None:
        """Release the held writes and finish them (the runtime's stop, before the store closes)."""
        self._released.set()
        draining = self._draining
        if draining is not None:
            await draining
