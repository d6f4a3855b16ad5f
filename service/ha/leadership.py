"""The :class:`Leadership` of one replica: ACTIVE or STANDBY, decided by the leader lease (issue 46).

One asyncio task runs a lease cycle (:meth:`store.lease.Lease.cycle`) every ``ha.renew_seconds``:

    STANDBY --cycle holds the lease (it had expired: epoch + 1)--> promote(epoch) --> ACTIVE
    ACTIVE  --cycle renews it at the same epoch-----------------> (nothing)
    ACTIVE  --another holds it / a new epoch / the local deadline
              passed without a renewal / a FencedError anywhere--> demote() --> STANDBY

Promotion starts the writers (:class:`~service.ha.writers.ActiveWriters`: the tails from the stored
positions, detection from the saved state, the notification dispatcher); stepping down stops them at once
without saving anything over the new active replica's. A write the fencing guard refuses wakes the task
from the writer's thread, so a replica woken from SIGSTOP steps down at its first refused write, or at its
first lease cycle, whichever comes first; it takes over again only once the lease has expired.

A lease cycle that fails (the database unreachable, restarting) keeps the role and the writers: no other
replica can take the lease without the database, detection goes on from memory (the store's write
failures path), and sends wait (:meth:`Leadership.may_send` is false once the local deadline passes)
until a cycle renews the lease at the same epoch, or finds it taken over and steps down.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from typing import Any, Protocol

from collectors.errors import FencedError, StoreError
from store.fencing import Fence
from store.health import StoreHealth
from store.lease import Lease

log = logging.getLogger(__name__)

ACTIVE = "active"
STANDBY = "standby"


class Writers(Protocol):
    """What only the active replica runs."""

    async def promote(self, epoch: int) -> None: ...

    async def demote(self) -> None: ...

    async def retire(self) -> None: ...


def ha_enabled(settings: Any) -> bool:
    """``ha.enabled``, or when unset: on for a PostgreSQL store (``store.url``), off for the SQLite file."""
    if settings.ha.enabled is not None:
        return bool(settings.ha.enabled)
    return getattr(settings.store, "url", None) is not None


def replica_id(settings: Any) -> str:
    """``ha.replica_id``, else ``<hostname>-<pid>``: unique per process, so a restarted replica is a new
    holder (it never mistakes the lease of its previous life for its own)."""
    configured: str | None = settings.ha.replica_id
    return configured if configured else f"{socket.gethostname()}-{os.getpid()}"


class Leadership:
    """Start with :meth:`start` in a running loop (after setting :attr:`writers`), end with :meth:`stop`."""

    def __init__(
        self,
        lease: Lease,
        *,
        renew_seconds: float,
        writers: Writers | None = None,
        health: StoreHealth | None = None,
    ) -> None:
        self.lease = lease
        # The store's health: on a standby its only writes are the lease cycles, so they tell it that the
        # database takes writes again after a failure (else a standby would stay "store failing" for good).
        self._health = health
        self.writers = writers
        self.renew_seconds = renew_seconds
        self.role = STANDBY
        self.promotions = 0
        self.step_downs = 0
        self.fence = Fence(lease, self._fenced)  # the guard of the active replica's store objects
        self._epoch: int | None = None  # the epoch the writers run at (None: standby)
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._failing = False  # the lease cycles fail (logged once per spell)

    # ------------------------------------------------------------------ what others ask

    @property
    def replica(self) -> str:
        return self.lease.holder

    @property
    def epoch(self) -> int | None:
        """The epoch this replica's writers run at; None on a standby."""
        return self._epoch if self.role == ACTIVE else None

    def may_send(self) -> bool:
        """ACTIVE, holding the lease, and its local monotonic deadline not passed (checked before a send)."""
        return self.role == ACTIVE and self.lease.epoch == self._epoch and self.lease.valid()

    def may_write(self) -> bool:
        """The same test, for the writes the database does not fence (history, tail positions)."""
        return self.may_send()

    def view(self) -> dict[str, Any]:
        """For /readyz and /metrics: this replica's role and the lease as last read."""
        row = self.lease.last
        return {
            "role": self.role,
            "replica": self.replica,
            "holder": row.holder if row is not None else None,
            "epoch": row.epoch if row is not None else None,
            "lease_seconds": self.lease.lease_seconds,
            "promotions": self.promotions,
            "step_downs": self.step_downs,
        }

    # ------------------------------------------------------------------ running

    async def start(self) -> None:
        """Run the first lease cycle now (a replica that gets the lease starts its writers before this
        returns), then one every ``renew_seconds`` in the background."""
        self._loop = asyncio.get_running_loop()
        self._stopping = False
        await self.run_once()
        self._task = self._loop.create_task(self._run(), name="leadership")

    async def stop(self) -> None:
        """Stop cycling; if ACTIVE, stop the writers the way a single replica stops (the tails save their
        positions, detection evaluates what is queued and saves its state, the dispatcher queues what is
        left), still under the lease, then release it so that a standby takes over at its next cycle."""
        self._stopping = True
        self._wake.set()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.role != ACTIVE:
            await asyncio.to_thread(self.lease.close)
            return
        if self.writers is not None:
            await self.writers.retire()
        self.role, self._epoch = STANDBY, None
        try:
            released = await asyncio.to_thread(self.lease.release)
        except StoreError as exc:
            log.warning("leadership: lease not released (a standby takes over when it expires): %s", exc)
        else:
            log.info("leadership: %s released the lease (%s)", self.replica, "done" if released else "lost")
        await asyncio.to_thread(self.lease.close)

    async def _run(self) -> None:
        while not self._stopping:
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.renew_seconds)
            if self._stopping:
                return
            try:
                await self.run_once()
            except Exception:  # a bug must not end the leadership: the next cycle tries again
                log.exception("leadership: lease cycle crashed")

    async def run_once(self) -> None:
        """One step of the state machine (see the module): a lease lost to a fenced write first, then a
        lease cycle."""
        if self.role == ACTIVE and self.lease.epoch != self._epoch:
            await self._demote("a write found the lease held by another replica")
        try:
            cycle = await asyncio.to_thread(self.lease.cycle)
        except StoreError as exc:
            # Kept: nobody can take the lease without the database; sends wait for the next renewal.
            if not self._failing:
                log.warning("leadership: lease cycle failed (%s, sends held): %s", self.role, exc)
                self._failing = True
            return
        if self._failing:
            log.info("leadership: lease cycles succeed again")
            self._failing = False
        if self._health is not None and self.role != ACTIVE:
            self._health.succeeded()
        row = cycle.row
        if cycle.held and row is not None:
            if self.role == ACTIVE and row.epoch == self._epoch:
                return  # renewed
            if self.role == ACTIVE:
                await self._demote(f"the lease moved to a new epoch ({self._epoch} -> {row.epoch})")
            if not self._stopping:
                await self._promote(row.epoch)
        elif self.role == ACTIVE:
            holder = f"{row.holder} at epoch {row.epoch}" if row is not None else "nobody"
            await self._demote(f"the lease is held by {holder}")

    async def _promote(self, epoch: int) -> None:
        log.warning("leadership: %s is ACTIVE at epoch %d", self.replica, epoch)
        self.role, self._epoch = ACTIVE, epoch
        self.promotions += 1
        if self.writers is not None:
            await self.writers.promote(epoch)

    async def _demote(self, why: str) -> None:
        log.warning("leadership: %s steps down from epoch %s: %s", self.replica, self._epoch, why)
        self.role, self._epoch = STANDBY, None  # first: nothing is sent or written from here on
        self.step_downs += 1
        if self.writers is not None:
            await self.writers.demote()

    def _fenced(self, exc: FencedError) -> None:
        """The fencing guard refused a write (any thread): step down at once."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._wake.set)
