"""The store called from worker threads, as the service does through ``asyncio.to_thread``."""

from __future__ import annotations

import asyncio
import threading

from collectors.model import CommittedObservation, CommittedOffset
from store import Store

T0 = 1_700_000_000.0
PARTITIONS = 200


def observation(group: str, i: int) -> CommittedObservation:
    offsets = tuple(CommittedOffset(group, "t", p, i, 1) for p in range(PARTITIONS))
    return CommittedObservation("c1", T0 + i, offsets, (group,))


async def test_store_writes_from_many_threads_all_recorded(store: Store) -> None:
    async def writer(group: str) -> None:
        for i in range(20):
            await asyncio.to_thread(store.record_committed, observation(group, i))
            await asyncio.to_thread(store.set_tail_position, "c1", int(group[1:]), i, T0 + i)

    await asyncio.gather(*(writer(f"g{n}") for n in range(4)))
    assert store.groups("c1") == ("g0", "g1", "g2", "g3")
    for n in range(4):
        assert len(store.committed_history("c1", f"g{n}")) == 20 * PARTITIONS
        assert store.tail_position("c1", n) is not None


def test_store_readers_during_writes_see_only_whole_observations(store: Store) -> None:
    store.record_committed(observation("g", 0))
    done = threading.Event()
    problems: list[str] = []

    def reader() -> None:
        seen = 0
        while not done.is_set():
            offsets = {p.offset for p in store.latest_committed("c1", "g")}
            # One observation is one transaction: a reader never sees half of it.
            if len(offsets) != 1:
                problems.append(f"mixed snapshot {sorted(o or 0 for o in offsets)[:5]}")
                return
            current = offsets.pop() or 0
            if current < seen:
                problems.append(f"went back from {seen} to {current}")
                return
            seen = current

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for thread in threads:
        thread.start()
    try:
        for i in range(1, 60):
            store.record_committed(observation("g", i))
    finally:
        done.set()
        for thread in threads:
            thread.join(timeout=30)
    assert problems == []
    assert {p.offset for p in store.latest_committed("c1", "g")} == {59}
