"""How long a detection trigger waits (:class:`OffsetsPace`): one evaluation per offsets interval.

The collectors of a cluster start together each interval and finish apart (the committed offsets served
from the tail in milliseconds, the log offsets of 20,000 partitions in a fifth of a second), and a busy
tail hands commits all the time: evaluated as each arrives (the minimum interval allowing), a 5 s cycle
took two full evaluations, the log ranges in the second. While log offsets keep arriving, every other
trigger that is no incident waits for the next offsets observation (at most ``wait_seconds``), which then
evaluates at once with all of them: half the evaluations, and the log ranges judged as they arrive.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class OffsetsPace:
    """The delay of each trigger. ``wait_seconds``: the longest wait, and how recent the last offsets
    observation must be for anything to wait (offsets that stopped arriving hold nothing back); 0: no
    trigger waits."""

    def __init__(self, wait_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._wait = wait_seconds
        self._clock = clock
        self._offsets_at: float | None = None

    def offsets_arrived(self) -> None:
        """An offsets observation arrived (it evaluates at once)."""
        self._offsets_at = self._clock()

    def delay(self, wanted: float) -> float:
        """The delay of a trigger that is neither an offsets observation nor an incident and would start an
        evaluation ``wanted`` seconds from now: ``wait_seconds`` (if longer) while offsets arrive, else
        ``wanted``."""
        last = self._offsets_at
        if self._wait <= 0 or last is None or self._clock() - last >= self._wait:
            return wanted
        return max(wanted, self._wait)
