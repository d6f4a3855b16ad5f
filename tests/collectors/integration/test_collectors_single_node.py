"""Collectors against the one-node sandbox (``kafka1``): exact offsets, groups, configs."""

from __future__ import annotations

import time
from typing import Any

import pytest
from kafka.structs import TopicPartition

from tests.collectors.integration.collector_it import (
    commit,
    create_topic,
    produce,
    start_console_consumer,
    stop_process,
    unique,
    wait_for,
)
from tests.support.group_consumer import GroupConsumer, subscribe

pytestmark = pytest.mark.integration

COUNTS = {0: 10, 1: 25, 2: 7}


def _offsets_by_tp(observation: Any, topic: str) -> dict[int, tuple[int, int]]:
    return {o.partition: (o.log_start, o.log_end) for o in observation.partitions if o.topic == topic}


def test_committed_and_log_offsets_are_exactly_what_was_produced_and_committed(
    kafka1: Any, admin_for: Any, collectors_for: Any
) -> None:
    admin, topic = admin_for(kafka1), unique("exact")
    create_topic(admin, topic, 3)
    produce(kafka1, topic, COUNTS)
    commits = {unique("g1"): {0: 3, 1: 25, 2: 0}, unique("g2"): {0: 10, 1: 1}, unique("g3"): {2: 6}}
    for group, offsets in commits.items():
        commit(admin, group, topic, offsets)
    c = collectors_for(kafka1)

    meta, offsets, _groups, committed, _configs = c.cycle()

    assert _offsets_by_tp(offsets, topic) == {p: (0, n) for p, n in COUNTS.items()}
    got = {(o.group, o.partition): (o.offset, o.metadata) for o in committed.offsets if o.topic == topic}
    assert got == {(g, p): (k, f"m{k}") for g, offs in commits.items() for p, k in offs.items()}
    lag = {
        (o.group, o.partition): COUNTS[o.partition] - o.offset for o in committed.offsets if o.topic == topic
    }
    assert lag == {(g, p): COUNTS[p] - k for g, offs in commits.items() for p, k in offs.items()}
    assert set(commits) <= set(committed.groups)
    assert committed.failures == () and offsets.failures == ()
    assert meta.offsets_topic_partitions == 10  # the sandbox's offsets.topic.num.partitions


def test_delete_records_moves_log_start_exactly(kafka1: Any, admin_for: Any, collectors_for: Any) -> None:
    admin, topic = admin_for(kafka1), unique("cut")
    create_topic(admin, topic, 3)
    produce(kafka1, topic, COUNTS)
    admin.delete_records({TopicPartition(topic, 1): 17, TopicPartition(topic, 2): 7})
    c = collectors_for(kafka1)

    _meta, offsets, *_ = c.cycle()

    assert _offsets_by_tp(offsets, topic) == {0: (0, 10), 1: (17, 25), 2: (7, 7)}


def test_classic_group_seen_with_member_and_assignment(
    kafka1: Any, admin_for: Any, collectors_for: Any
) -> None:
    admin, topic, group = admin_for(kafka1), unique("classic"), unique("cg")
    create_topic(admin, topic, 3)
    consumer = GroupConsumer(
        bootstrap_servers=kafka1.bootstrap_servers.split(","), group_id=group, client_id="it-classic"
    )
    try:
        subscribe(consumer, [topic])
        wait_for(lambda: consumer.poll(200) is not None and consumer.assignment(), what="classic assignment")
        c = collectors_for(kafka1)
        _meta, _offsets, groups, *_ = c.cycle()
    finally:
        consumer.close()

    info = next(g for g in groups.groups if g.group_id == group)
    assert (info.group_type, info.state, info.protocol_type, info.protocol) == (
        "classic",
        "Stable",
        "consumer",
        "range",
    )
    assert [m.client_id for m in info.members] == ["it-classic"]
    assert sorted(tp.partition for tp in info.members[0].assignment) == [0, 1, 2]
    assert info.coordinator is not None


def test_kip848_consumer_group_seen_with_type_member_and_assignment(
    kafka1: Any, admin_for: Any, collectors_for: Any
) -> None:
    admin, topic, group = admin_for(kafka1), unique("kip848"), unique("ng")
    create_topic(admin, topic, 2)
    produce(kafka1, topic, {0: 3, 1: 4})
    proc = start_console_consumer(kafka1, topic, group)
    c = collectors_for(kafka1)
    try:

        def stable_group() -> Any:
            _meta, _offsets, groups, *_ = c.cycle()
            found = [g for g in groups.groups if g.group_id == group]
            return found[0] if found and found[0].members and found[0].members[0].assignment else None

        info = wait_for(stable_group, what="KIP-848 group with an assigned member", timeout=90, every=1)
    finally:
        stop_process(proc)

    assert (info.group_type, info.protocol_type, info.state) == ("consumer", "consumer", "Stable")
    assert info.protocol == "uniform"
    assert [m.client_id for m in info.members] == ["console-consumer"]
    assert sorted((tp.topic, tp.partition) for tp in info.members[0].assignment) == [(topic, 0), (topic, 1)]
    assert info.group_epoch is not None and info.group_epoch >= 1


def test_configs_override_and_defaults_read_with_source(
    kafka1: Any, admin_for: Any, collectors_for: Any
) -> None:
    admin, topic = admin_for(kafka1), unique("cfg")
    create_topic(admin, topic, 1, configs={"retention.ms": "123456", "cleanup.policy": "compact,delete"})
    c = collectors_for(kafka1)

    *_, configs = c.cycle()

    cfg = next(t for t in configs.topics if t.topic == topic)
    sources = dict(cfg.sources)
    assert (cfg.retention_ms, sources["retention.ms"]) == (123456, "DYNAMIC_TOPIC_CONFIG")
    assert cfg.cleanup_policy == ("compact", "delete")
    assert (cfg.retention_bytes, sources["retention.bytes"]) == (None, "DEFAULT_CONFIG")
    assert (cfg.segment_ms, sources["segment.ms"]) == (604_800_000, "DEFAULT_CONFIG")
    assert cfg.unclean_leader_election_enable is False and cfg.replication_factor == 1
    broker = dict(configs.broker)
    assert broker["offsets.retention.minutes"] == "10080"
    assert "offsets.topic.replication.factor" in broker
    assert configs.failures == ()


def test_full_cycle_small_sandbox_under_one_second(kafka1: Any, collectors_for: Any) -> None:
    c = collectors_for(kafka1)
    c.cycle()  # connections, API versions

    started = time.perf_counter()
    results = c.cycle()
    elapsed = time.perf_counter() - started

    assert all(r.failures == () for r in results)
    assert elapsed < 1.0, f"one full cycle took {elapsed:.3f}s"
