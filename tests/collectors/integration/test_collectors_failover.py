"""Collectors against the three-broker sandbox (``kafka3``) while brokers stop and come back."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from collectors.offsets import OffsetsCollector
from tests.collectors.integration.collector_it import commit, create_topic, produce, unique, wait_for

pytestmark = pytest.mark.integration


def _partition(meta: Any, topic: str, index: int) -> Any:
    return next(p for p in meta.topic(topic).partitions if p.partition == index)


def test_leader_epoch_rises_after_leader_change(kafka3: Any, admin_for: Any, collectors_for: Any) -> None:
    admin, topic = admin_for(kafka3), unique("epoch")
    create_topic(admin, topic, 1, rf=3)
    produce(kafka3, topic, {0: 5})
    c = collectors_for(kafka3)
    before = _partition(asyncio.run(c.metadata.collect()), topic, 0)
    kafka3.stop_broker(before.leader)
    try:

        def moved() -> Any:
            p = _partition(asyncio.run(c.metadata.collect()), topic, 0)
            return p if p.leader not in (None, before.leader) else None

        after = wait_for(moved, what="a new leader")
        _meta, offsets, *_ = c.cycle()
    finally:
        kafka3.start_broker(before.leader)

    assert after.leader_epoch > before.leader_epoch
    row = next(o for o in offsets.partitions if o.topic == topic)
    assert (row.leader, row.log_end) == (after.leader, 5)
    assert row.leader_epoch is not None and row.leader_epoch > before.leader_epoch


def test_stopped_broker_cycle_completes_with_failures_then_recovers(
    kafka3: Any, admin_for: Any, collectors_for: Any
) -> None:
    admin, topic = admin_for(kafka3), unique("down")
    create_topic(admin, topic, 6, rf=1)  # rf=1: a stopped broker's partitions really go offline
    counts = dict.fromkeys(range(6), 4)
    produce(kafka3, topic, counts)
    groups = [unique("g") for _ in range(4)]
    for group in groups:
        commit(admin, group, topic, dict.fromkeys(range(6), 2))
    c = collectors_for(kafka3)
    stale = asyncio.run(c.metadata.collect())
    victim = 2
    led = {p.partition for p in stale.topic(topic).partitions if p.leader == victim}
    assert led, "the topic has no partition on the broker to stop"

    kafka3.stop_broker(victim)
    try:
        # Metadata from before the stop: the seam itself meets the dead broker.
        async def stale_meta() -> Any:
            return stale

        offsets_stale = asyncio.run(OffsetsCollector(c.seam, "it", stale_meta).collect())
        meta, offsets, group_obs, committed, configs = c.cycle()
    finally:
        kafka3.start_broker(victim)

    ours = {o.partition: o.log_end for o in offsets_stale.partitions if o.topic == topic}
    assert ours == {p: 4 for p in range(6) if p not in led}
    assert {f.key for f in offsets_stale.failures if f.scope == "broker"} == {str(victim)}
    assert {f.key for f in offsets_stale.failures if f.key.startswith(topic)} == {f"{topic}/{p}" for p in led}

    assert victim not in {b.node_id for b in meta.brokers}
    assert {o.partition for o in offsets.partitions if o.topic == topic} == set(range(6)) - led
    assert {f.key for f in offsets.failures if f.key.startswith(topic)} == {f"{topic}/{p}" for p in led}
    assert set(groups) <= set(committed.groups)  # coordinators moved: __consumer_offsets has rf=3
    assert {o.group for o in committed.offsets if o.topic == topic} == set(groups)
    assert group_obs.groups is not None and configs.topics

    def clean_cycle() -> Any:
        results = c.cycle()
        return results if all(r.failures == () for r in results) else None

    recovered = wait_for(clean_cycle, what="a cycle without failures after restart", timeout=90, every=2)
    _meta, offsets_back, *_ = recovered
    assert {o.partition: o.log_end for o in offsets_back.partitions if o.topic == topic} == counts
