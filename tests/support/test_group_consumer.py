"""The kafka-python rejoin bug :mod:`tests.support.group_consumer` works around, replayed on the sandbox.

A stable member's rejoin (a partition added under its assignment: the metadata no longer matches it) is
started by a ``poll()`` that times out at once, and the round ends in the background. Plain
``KafkaConsumer`` never collects it (if a kafka-python upgrade fixes that, the first test fails: drop the
workaround); ``GroupConsumer`` does.

The trigger is made, not waited for: a fresh member's first assignment against an empty metadata snapshot
(the way CI first met the bug) happens only when the join wins a race with the metadata response.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import kafka.errors as kerr
import pytest
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.admin import NewPartitions, NewTopic

from sandbox.cluster import SandboxCluster
from tests.e2e.harness import create_topics
from tests.support.group_consumer import GroupConsumer, subscribe

pytestmark = pytest.mark.integration


def _new_topic(kafka: SandboxCluster, prefix: str, partitions: int) -> str:
    """A fresh topic (also the group's name), led on every partition."""
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    create_topics(kafka, [NewTopic(name, partitions, 1)])
    return name


def _rejoin_orphaned(kafka: SandboxCluster, cls: type[KafkaConsumer]) -> Any:
    """A member stable in generation 1; a partition added to its topic; once the refreshed metadata asks
    for a rejoin, a ``poll()`` that starts the round and times out at once. The round ends in the
    background."""
    topic = _new_topic(kafka, "rejoin", 1)
    consumer = cls(
        bootstrap_servers=kafka.bootstrap_servers,
        group_id=topic,
        enable_auto_commit=False,
        session_timeout_ms=10_000,
        heartbeat_interval_ms=1000,
        max_poll_interval_ms=60_000,
    )
    coordinator = consumer._coordinator
    deadline = time.monotonic() + 40  # within max_poll_interval_ms: the member never leaves on its own
    subscribe(consumer, [topic])  # the first assignment covers the topic: no rejoin of its own
    while not (consumer.assignment() and coordinator.stable()):
        assert time.monotonic() < deadline, "never joined"
        consumer.poll(timeout_ms=200)
    assert coordinator._generation.generation_id == 1
    admin = KafkaAdminClient(**kafka.client_config())
    try:
        admin.create_partitions({topic: NewPartitions(2)})
    finally:
        admin.close()
    consumer._client.cluster.request_update()
    while not coordinator.need_rejoin():
        assert time.monotonic() < deadline, "the metadata never asked for a rejoin"
        time.sleep(0.05)
    consumer.poll(timeout_ms=0)
    while not coordinator._join_task.is_done:
        assert time.monotonic() < deadline, "the round never ended"
        time.sleep(0.05)
    assert coordinator.rebalance_in_progress() and not coordinator.need_rejoin()
    return consumer


def _stable_within(consumer: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        consumer.poll(timeout_ms=200)
        if consumer._coordinator.stable():
            return True
    return False


def test_kafka_consumer_orphaned_rejoin_stays_rebalancing_commit_refused(kafka1: SandboxCluster) -> None:
    consumer = _rejoin_orphaned(kafka1, KafkaConsumer)
    try:
        assert not _stable_within(consumer, 5)
        assert not consumer._coordinator.need_rejoin()
        with pytest.raises(kerr.RebalanceInProgressError):
            consumer.commit()
    finally:
        consumer.close(autocommit=False)


def test_group_consumer_orphaned_rejoin_finished_commit_accepted(kafka1: SandboxCluster) -> None:
    consumer = _rejoin_orphaned(kafka1, GroupConsumer)
    try:
        assert _stable_within(consumer, 15)
        assert {tp.partition for tp in consumer.assignment()} == {0, 1}  # the added partition too
        consumer.commit()
    finally:
        consumer.close(autocommit=False)


def test_subscribe_first_assignment_covers_topic_no_second_round(kafka1: SandboxCluster) -> None:
    topic = _new_topic(kafka1, "subscribe", 2)
    consumer = KafkaConsumer(
        bootstrap_servers=kafka1.bootstrap_servers, group_id=topic, enable_auto_commit=False
    )
    try:
        subscribe(consumer, [topic])
        assert _stable_within(consumer, 30)
        assert consumer.assignment() == {TopicPartition(topic, 0), TopicPartition(topic, 1)}
        for _ in range(10):  # 2 s: a rejoin for metadata the first assignment lacked would start here
            consumer.poll(timeout_ms=200)
        coordinator = consumer._coordinator
        assert (coordinator._generation.generation_id, coordinator.stable()) == (1, True)
        consumer.commit()
    finally:
        consumer.close(autocommit=False)
