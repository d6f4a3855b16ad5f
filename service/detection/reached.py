"""A cache in front of the store's "when did the log end reach this offset" (lag in seconds).

Detection asks it for every lagging group-partition on every evaluation; the store answers each from the
log-end rows it wrote itself when they decide it (:mod:`store.log_end_memory`), else with a query over the
partition's history. The answer for ``(topic, partition, offset)`` is fixed once the log end
has reached ``offset``, until the log end falls below ``offset`` again (a truncation, a re-created topic:
then the crossing that counts is a later one). So known answers are kept and dropped when an offsets
observation shows such a fall, and entries nobody asked for since the previous offsets observation are
forgotten (committed offsets move on). Unknown answers (``None``) are never kept: the crossing may come.
But the questions that had none are asked again all at once, in one batched query, when the next offsets
observation arrives (before the evaluation that asks them): a lagging row whose crossing predates the
history is not one query per row and evaluation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Set

from alerts.state import LogEndClock
from collectors.errors import OffsetguardError
from collectors.model import OffsetsObservation

log = logging.getLogger(__name__)

Key = tuple[str, int, int]
# the store's batched lookup of one cluster: the answers it has for these (topic, partition, offset)
ManyLookup = Callable[[Set[Key]], Mapping[Key, float]]


class ReachedAtCache:
    """A :data:`alerts.state.LogEndClock` remembering the store's answers (see the module doc)."""

    def __init__(self, lookup: LogEndClock, many: ManyLookup | None = None) -> None:
        self._lookup = lookup
        self._many = many
        self._known: dict[Key, float] = {}
        self._asked: set[Key] = set()
        self._unanswered: set[Key] = set()  # asked since the last observation, no answer
        self._none: frozenset[Key] = frozenset()  # no answer in this observation's batch either
        self.hits = 0
        self.misses = 0
        self.batched = 0  # questions asked again in a batch

    def __call__(self, topic: str, partition: int, offset: int) -> float | None:
        key = (topic, partition, offset)
        self._asked.add(key)
        when = self._known.get(key)
        if when is not None:
            self.hits += 1
            return when
        if key in self._none:  # the batch asked it moments ago
            self._unanswered.add(key)
            return None
        self.misses += 1
        when = self._lookup(topic, partition, offset)
        if when is not None:
            self._known[key] = when
        else:
            self._unanswered.add(key)
        return when

    def observe(self, offsets: OffsetsObservation) -> None:
        """Forget answers the log ends in ``offsets`` contradict, and those not asked for since last time."""
        if not self._known and not self._asked and not self._unanswered and not self._none:
            return  # nothing lagged since the last observation: nothing held, nothing to ask again
        ends = offsets.log_ends()
        keep: dict[Key, float] = {}
        for key, when in self._known.items():
            end = ends.get((key[0], key[1]))
            if key in self._asked and (end is None or end >= key[2]):
                keep[key] = when
        self._known = keep
        self._asked = set()
        again = {k for k in self._unanswered if (end := ends.get((k[0], k[1]))) is None or end >= k[2]}
        self._unanswered = set()
        self._none = frozenset()
        if self._many is None or not again:
            return
        try:
            found = self._many(again)
        except OffsetguardError as exc:  # each is asked on its own again, as without a batch
            log.warning("detection: log-end crossing times not asked in a batch: %s", exc)
            return
        self.batched += len(again)
        self._known.update((k, at) for k, at in found.items() if k in again)
        self._none = frozenset(again.difference(found))
