"""When the detection loop saves its state: every ``state_save_seconds``, in a quiet moment of ``/metrics``.

A fleet's save is a few hundred milliseconds of CPU (20k partitions: ~0.35 s) holding the interpreter lock
in JSON-encoding lumps. Beside a ``/metrics`` render planned ahead of a scrape it slows that render, and the
scrape waits for it; with a 120 s save and a 15 s (or 30, 60 s) scrape interval the two meet at the same
point of every save period, one scrape in eight or so. So a due save waits until the endpoint expects no
render for a while (``quiet_for``, :meth:`service.metrics.MetricsEndpoint.quiet_for`): twice the last
save's duration plus a second. It never waits more than :data:`DEFER_MAX_S` past its time: a crash loses at
most ``state_save_seconds`` + that of detection state (what it loses is explained in
:mod:`service.detection.loop`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

DEFER_MAX_S = 60.0
ROOM_FACTOR = 2.0
ROOM_MARGIN_S = 1.0
FIRST_SAVE_S = 2.0  # a save's duration assumed before one was timed


def always_quiet() -> float:
    """No ``/metrics`` to keep clear of (no endpoint, or a test)."""
    return math.inf


@dataclass(slots=True)
class SaveTiming:
    """``every``: ``state_save_seconds``; ``last``: when the last save (or the loop) started; ``took``:
    how long the last stored save took (monotonic seconds)."""

    every: float
    last: float
    took: float = FIRST_SAVE_S

    def due(self, now: float, quiet_for: Callable[[], float]) -> bool:
        """Whether to save at ``now``: its time has come and ``quiet_for()`` leaves room, or it waited
        :data:`DEFER_MAX_S`."""
        since = now - self.last
        if since < self.every:
            return False
        return since >= self.every + DEFER_MAX_S or quiet_for() >= ROOM_FACTOR * self.took + ROOM_MARGIN_S

    def begin(self, now: float) -> None:
        """A save starts (or finds nothing to save) at ``now``: the next is due ``every`` from it."""
        self.last = now

    def end(self, now: float) -> None:
        """The save begun last was stored at ``now``."""
        self.took = now - self.last
