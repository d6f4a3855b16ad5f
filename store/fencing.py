"""The fencing guard of issue 46: a write of the active replica commits only while it holds the lease.

:class:`Fence` is a :attr:`store.writer.WriterConnection.guard`: run first inside every write transaction
of the store classes the active replica's writers use (the alert store detection writes through, the
notification store the dispatcher writes through). Inside that transaction it reads the lease row (on
PostgreSQL with ``SELECT ... FOR UPDATE``, so a takeover's ``UPDATE`` of the row waits until this write
has committed; on SQLite ``BEGIN IMMEDIATE`` already holds the database's one write lock) and checks that
it names our holder at our epoch and has not expired on the database's clock; otherwise it raises
:class:`~collectors.errors.FencedError`, which rolls the write back. When another replica holds the lease
the guard also forgets it locally and tells ``on_fenced`` (the leadership, which steps down at once); when
it is still ours but ran out unrenewed (a stalled database) the write is refused and the lease kept for
the next cycle to renew. A replica frozen past its lease and woken up therefore cannot change anything:
its first write is refused.

User actions (acknowledgements, silences) are not fenced: they go through the API's own, unguarded store
objects and apply on any replica.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, NoReturn

from collectors.errors import FencedError
from store.alerts import AlertStore
from store.lease import Lease, read_row

log = logging.getLogger(__name__)


class Fence:
    """The guard of one replica's writers over ``lease``; ``on_fenced`` is called (from the writer's
    thread) with the error each time a write is refused."""

    def __init__(self, lease: Lease, on_fenced: Callable[[FencedError], None] | None = None) -> None:
        self._lease = lease
        self._on_fenced = on_fenced
        self.refused = 0  # writes refused so far

    def __call__(self, conn: Any) -> None:
        lease = self._lease
        epoch = lease.epoch
        if epoch is None:
            raise FencedError(
                "write refused: this replica does not hold the leader lease", holder=lease.holder
            )
        row, now = read_row(conn, lease.name, lock=True)
        if row is None or row.holder != lease.holder or row.epoch != epoch:
            current = f"held by {row.holder} at epoch {row.epoch}" if row is not None else "never taken"
            self._lost(
                FencedError(
                    f"write refused: the leader lease is {current} (we held epoch {epoch})",
                    holder=lease.holder,
                    epoch=epoch,
                    current_holder=row.holder if row is not None else None,
                    current_epoch=row.epoch if row is not None else None,
                )
            )
        if row.expires_at <= now:
            # Still ours but not renewed in time (a stalled database, a paused process): refused, and kept;
            # the next lease cycle renews it at this epoch or finds it taken over (then we step down).
            self.refused += 1
            raise FencedError(
                f"write refused: the leader lease (epoch {epoch}) ran out {now - row.expires_at:.1f} s ago",
                holder=lease.holder,
                epoch=epoch,
                current_holder=row.holder,
                current_epoch=row.epoch,
            )

    def _lost(self, exc: FencedError) -> NoReturn:
        """Another replica holds the lease: forget ours and tell the leadership, which steps down."""
        self.refused += 1
        self._lease.lost()
        if self._on_fenced is not None:
            try:
                self._on_fenced(exc)
            except Exception:  # the write is refused whatever the listener does
                log.exception("fencing: step-down listener failed")
        raise exc


def fence_alerts(alerts: AlertStore, fence: Fence) -> None:
    """Guard ``alerts`` (the alert store detection writes through) with ``fence``.

    Its cache of firing alerts is dropped at each guarded write too: other replicas (and the API's own
    alert store in this process) write acknowledgements to the same rows, so the firing set is read again
    inside the write's transaction instead of trusting what this object last committed.
    """

    def guard(conn: Any) -> None:
        fence(conn)
        alerts._firing.clear()  # the cache's owner is in this package (see the docstring)

    alerts.guard = guard
