"""When the queue's catch-up can find anything (:class:`CatchUp`).

The catch-up (:mod:`service.notify.fanout`) queues ``firing`` for each firing alert that a receiver accepts,
was never told about and that no active silence holds back. Reading every firing alert for it on every
round cost a fleet with 13,000 firing lag alerts a quarter of the service's CPU, though after one catch-up
a firing alert can become due for another only if

- a transition (fired, reclassified, changed, ...) is fanned out: that change tells the receivers itself;
- the silences active now are not those of the last catch-up (one ended, was deleted, edited or started);
- transitions were consumed without being fanned out (older than the retry give-up age, after downtime);
- notification rows were deleted (a prune).

So the catch-up runs at the first round after a start (receivers may have been added), then only after
one of the last three; never without receivers.
"""

from __future__ import annotations

from collections.abc import Sequence

from store.notification_records import Silence

ActiveSilences = frozenset[tuple[str, float, float, float]]  # (id, starts_at, ends_at, updated_at)


class CatchUp:
    """The dispatcher's record of its last catch-up. :meth:`wanted` is asked by the store inside the
    advance's transaction; call :meth:`done` once that advance committed with the catch-up in it."""

    def __init__(self, receivers: bool) -> None:
        self._enabled = receivers
        self._due = receivers
        self._active: ActiveSilences | None = None
        self._asked: ActiveSilences | None = None

    def wanted(self, silences: Sequence[Silence], now: float) -> bool:
        if not self._enabled:
            return False
        self._asked = frozenset(
            (s.id, s.starts_at, s.ends_at, s.updated_at) for s in silences if s.status(now) == "active"
        )
        return self._due or self._asked != self._active

    def done(self) -> None:
        self._active, self._due = self._asked, False

    def invalidate(self) -> None:
        """The next advance that can catch up does."""
        self._due = self._enabled
