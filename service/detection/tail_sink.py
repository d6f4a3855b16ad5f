"""Tail events into detection: :class:`DetectionTailSink` converts decoded ``__consumer_offsets`` records
with :func:`alerts.events.to_event` and queues them on a :class:`DetectionLoop`; :class:`FanOutSink`
hands one batch to several sinks (detection beside the in-memory recent-events buffer)."""

from __future__ import annotations

from collections.abc import Sequence

from alerts.events import to_event
from alerts.model import CommitEvent, GroupEvent
from collectors.tail_model import TailEvent, TailSink
from service.detection.loop import DetectionLoop


class DetectionTailSink:
    """A :class:`collectors.tail_model.TailSink` feeding one cluster's :class:`DetectionLoop`.

    Returns once the events are queued (evaluation follows within ``debounce_seconds``); waits only when
    detection falls far behind, which slows the tail instead of growing memory.
    """

    def __init__(self, loop: DetectionLoop) -> None:
        self.loop = loop

    async def on_events(self, events: Sequence[TailEvent]) -> None:
        converted: list[CommitEvent | GroupEvent] = []
        for e in events:
            event = to_event(e.cluster, e.partition, e.offset, e.timestamp, e.record)
            if event is not None:
                converted.append(event)
        await self.loop.add_events(converted)


class FanOutSink:
    """Every batch to every sink, in order."""

    def __init__(self, *sinks: TailSink) -> None:
        self.sinks = sinks

    async def on_events(self, events: Sequence[TailEvent]) -> None:
        for sink in self.sinks:
            await sink.on_events(events)
