"""kafka-python group members for tests, with a client bug that made them flaky worked around.

kafka-python 3.0.12 runs a JoinGroup/SyncGroup round as a background task and collects its result in
``poll()`` only while ``need_rejoin()`` holds. A rejoin started because the metadata changed under the
leader's last assignment (every fresh member: its first assignment is made against an empty metadata
snapshot) sets nothing that outlives the condition: the leader's new assignment makes the snapshots
equal again, so when the ``poll()`` that started the round times out before it ends, no later ``poll()``
collects it. The member then stays REBALANCING, with heartbeats off, until the broker expires it and the
group goes Empty; every commit is refused with RebalanceInProgressError. (Seen in CI, and reproduced with
the diagnosis in ``tests/e2e/consumers._membership``: ``need_rejoin=False``, join task done, no error.)

Two defences: :func:`subscribe` waits until the coordinator's metadata snapshot has the topics before
the first ``poll()``, so the first assignment covers them and no such rejoin follows; and
:class:`GroupConsumer` asks for the rejoin again after each ``poll()`` that leaves the member in the
state above (any other metadata change), so the next ``poll()`` finishes it (awaiting the round still in
flight, or joining again).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from kafka import KafkaConsumer


class GroupConsumer(KafkaConsumer):  # type: ignore[misc]
    def poll(self, timeout_ms: int = 0, max_records: int | None = None, update_offsets: bool = True) -> Any:
        records = super().poll(timeout_ms=timeout_ms, max_records=max_records, update_offsets=update_offsets)
        rejoin_if_orphaned(self)
        return records


def rejoin_if_orphaned(consumer: KafkaConsumer) -> None:
    """Request the rejoin again if the member is rebalancing with nothing left to finish it."""
    coordinator = consumer._coordinator
    if not consumer._subscription.partitions_auto_assigned():
        return
    with coordinator._lock:  # the round's success sets rejoin_needed and the state under this lock
        if coordinator.rebalance_in_progress() and not coordinator.need_rejoin():
            coordinator.request_rejoin()


def subscribe(consumer: KafkaConsumer, topics: Sequence[str], timeout: float = 60) -> None:
    """``consumer.subscribe(topics)`` once its metadata has every topic, returning when the coordinator's
    metadata snapshot has them too (a fresh topic, a cluster just restarted: the first assignment would
    otherwise be made without them and be redone at once)."""
    deadline = time.monotonic() + timeout
    while not all(consumer.partitions_for_topic(t) for t in topics):
        assert time.monotonic() < deadline, f"no metadata for {list(topics)}"
        time.sleep(0.2)
    consumer.subscribe(list(topics))
    while not all(t in consumer._coordinator._metadata_snapshot for t in topics):
        assert time.monotonic() < deadline, f"the group coordinator never saw {list(topics)}"
        time.sleep(0.05)
