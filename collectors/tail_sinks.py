"""In-memory :class:`collectors.tail_model.TailSink`: counts by kind and the most recent events.

The service hands tail events here until the detection engine plugs in as the sink.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Sequence
from operator import attrgetter
from typing import Any

from collectors.codec import OffsetCommit, OffsetCommitTombstone
from collectors.tail_model import TailEvent

_RECORD = attrgetter("record")
_TIMESTAMP = attrgetter("timestamp")


class RecentEvents:
    """Keeps the last ``keep`` events and how many of each record kind arrived."""

    def __init__(self, keep: int = 1000) -> None:
        self.recent: deque[TailEvent] = deque(maxlen=keep)
        self.kinds: Counter[str] = Counter()
        self.batches = 0
        self.events = 0
        self.last_timestamp: int | None = None  # newest record timestamp seen (ms)

    async def on_events(self, events: Sequence[TailEvent]) -> None:
        if not events:
            return
        self.batches += 1
        self.events += len(events)
        # counted in C: a busy tail hands thousands of events a second
        counts = Counter(map(type, map(_RECORD, events)))
        kinds = self.kinds
        kinds["OffsetCommit"] += counts.pop(OffsetCommit, 0)
        kinds["OffsetCommitTombstone"] += counts.pop(OffsetCommitTombstone, 0)
        for kind, n in counts.items():
            kinds[kind.__name__] += n
        self.recent.extend(events[-(self.recent.maxlen or 0) :])
        newest = max(map(_TIMESTAMP, events))
        if self.last_timestamp is None or newest > self.last_timestamp:
            self.last_timestamp = newest

    def stats(self) -> dict[str, Any]:
        """JSON-ready counters."""
        return {
            "batches": self.batches,
            "events": self.events,
            "by_kind": dict(sorted((k, n) for k, n in self.kinds.items() if n)),
            "last_record_timestamp_ms": self.last_timestamp,
        }
