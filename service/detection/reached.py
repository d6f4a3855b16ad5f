"""A cache in front of the store's "when did the log end reach this offset" (lag in seconds).

Detection asks it for every lagging group-partition on every evaluation; the store answers each with a
query over the partition's history. The answer for ``(topic, partition, offset)`` is fixed once the log end
has reached ``offset``, until the log end falls below ``offset`` again (a truncation, a re-created topic:
then the crossing that counts is a later one). So known answers are kept and dropped when an offsets
observation shows such a fall, and entries nobody asked for since the previous offsets observation are
forgotten (committed offsets move on). Unknown answers (``None``) are never cached: the crossing may come.
"""

from __future__ import annotations

from alerts.state import LogEndClock
from collectors.model import OffsetsObservation

Key = tuple[str, int, int]


class ReachedAtCache:
    """A :data:`alerts.state.LogEndClock` remembering the store's answers (see the module doc)."""

    def __init__(self, lookup: LogEndClock) -> None:
        self._lookup = lookup
        self._known: dict[Key, float] = {}
        self._asked: set[Key] = set()
        self.hits = 0
        self.misses = 0

    def __call__(self, topic: str, partition: int, offset: int) -> float | None:
        key = (topic, partition, offset)
        self._asked.add(key)
        when = self._known.get(key)
        if when is not None:
            self.hits += 1
            return when
        self.misses += 1
        when = self._lookup(topic, partition, offset)
        if when is not None:
            self._known[key] = when
        return when

    def observe(self, offsets: OffsetsObservation) -> None:
        """Forget answers the log ends in ``offsets`` contradict, and those not asked for since last time."""
        ends = {(p.topic, p.partition): p.log_end for p in offsets.partitions}
        keep: dict[Key, float] = {}
        for key, when in self._known.items():
            end = ends.get((key[0], key[1]))
            if key in self._asked and (end is None or end >= key[2]):
                keep[key] = when
        self._known = keep
        self._asked = set()
