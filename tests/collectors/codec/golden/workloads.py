"""Real workloads that make a sandbox broker write every kind of ``__consumer_offsets`` record we decode.

Each function drives real clients (kafka-python, Kafka's own console consumer) and returns what it did,
so tests can check the records exist before comparing them with Kafka's formatters.
"""

from __future__ import annotations

import subprocess
import threading
import time
import uuid
from dataclasses import dataclass

from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata

from sandbox.cluster import SandboxCluster
from tests.support.group_consumer import GroupConsumer, subscribe

METADATA_SIZES = (0, 126, 127, 300)  # 127 is the first length a v4 compact string needs two varint bytes


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(name, partitions, 1)], wait_for_metadata=True)
    finally:
        admin.close()


def produce(bootstrap: str, topic: str, partitions: int, per_partition: int) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    try:
        for i in range(per_partition * partitions):
            producer.send(topic, f"m{i}".encode(), partition=i % partitions)
        producer.flush()
    finally:
        producer.close()


def classic_group_commits(bootstrap: str, topic: str, group: str, partitions: int, total: int) -> None:
    """A subscribed KafkaConsumer polls ``total`` messages, then commits p with METADATA_SIZES[p] bytes."""
    consumer = GroupConsumer(
        bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    try:
        subscribe(consumer, [topic])
        seen, deadline = 0, time.monotonic() + 30
        while seen < total and time.monotonic() < deadline:
            seen += sum(len(batch) for batch in consumer.poll(timeout_ms=500).values())
        assert seen >= total, f"classic consumer saw {seen} of {total} messages"
        offsets = {
            TopicPartition(topic, p): OffsetAndMetadata(p + 1, "x" * METADATA_SIZES[p], -1)
            for p in range(partitions)
        }
        consumer.commit(offsets)
    finally:
        consumer.close(autocommit=False)


def transactional_commit(bootstrap: str, topic: str, group: str, *, offset: int, commit: bool) -> None:
    """One transaction carrying an offset commit for ``group``; committed or aborted."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=unique("golden-tx"))
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(topic, b"in-transaction", partition=0)
        producer.send_offsets_to_transaction(
            {TopicPartition(topic, 0): OffsetAndMetadata(offset, "tx", -1)}, group
        )
        if commit:
            producer.commit_transaction()
        else:
            producer.abort_transaction()
    finally:
        producer.close()


def consumer_protocol_group(cluster: SandboxCluster, topic: str, group: str) -> None:
    """Kafka's console consumer in a KIP-848 (``group.protocol=consumer``) group: types 3–8 and commits.

    While it runs, a classic kafka-python consumer joins the same group for a few seconds, so the
    broker also writes a member with ClassicMemberMetadata (tag 0 of type 5), revocations (type 8
    with partitions pending revocation) and that member's tombstones.
    """
    result: list[subprocess.CompletedProcess[str]] = []

    def console() -> None:
        result.append(
            cluster.run_tool(
                "org.apache.kafka.tools.consumer.ConsoleConsumer",
                "--bootstrap-server",
                cluster.bootstrap_servers,
                "--topic",
                topic,
                "--group",
                group,
                "--consumer-property",
                "group.protocol=consumer",
                "--from-beginning",
                "--timeout-ms",
                "9000",  # exits 9 s after its last message, once the classic member has come and gone
                timeout=90,
            )
        )

    thread = threading.Thread(target=console, name="golden-console-consumer")
    thread.start()
    try:
        time.sleep(4)
        classic = GroupConsumer(
            bootstrap_servers=cluster.bootstrap_servers, group_id=group, enable_auto_commit=False
        )
        try:
            subscribe(classic, [topic])
            until = time.monotonic() + 4
            while time.monotonic() < until:
                classic.poll(timeout_ms=300)
        finally:
            classic.close(autocommit=False)
    finally:
        thread.join(120)
    assert result and result[0].returncode == 0, f"console consumer failed: {result}"


def standalone_commit(bootstrap: str, topic: str, group: str, partition: int, offset: int) -> None:
    """A commit by a group with no members (admin OffsetCommit, like an assign() consumer's)."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        result = admin.alter_group_offsets(
            group, {TopicPartition(topic, partition): OffsetAndMetadata(offset, "", -1)}
        )
    finally:
        admin.close()
    errors = {tp: err for tp, err in result.items() if err.errno != 0}
    assert not errors, f"alter_group_offsets failed: {errors}"


def delete_offset(bootstrap: str, group: str, topic: str, partition: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        result = admin.delete_group_offsets(group, [TopicPartition(topic, partition)])
    finally:
        admin.close()
    errors = {tp: err for tp, err in result.items() if err.errno != 0}
    assert not errors, f"delete_group_offsets failed: {errors}"


def delete_groups(bootstrap: str, *groups: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        result = admin.delete_groups(list(groups))
    finally:
        admin.close()
    errors = {g: err for g, err in dict(result).items() if getattr(err, "errno", 0) != 0}
    assert not errors, f"delete_groups failed: {errors}"


@dataclass(frozen=True)
class Workload:
    """Names used by one run of :func:`run_all`."""

    topic: str
    classic_group: str
    tx_group: str
    consumer_group: str
    deleted_group: str


TX_COMMITTED_OFFSET = 2
TX_ABORTED_OFFSET = 3


def run_all(cluster: SandboxCluster) -> Workload:
    """Every workload on one topic of 4 partitions with 5 messages each."""
    b = cluster.bootstrap_servers
    w = Workload(
        topic=unique("golden"),
        classic_group=unique("golden-classic"),
        tx_group=unique("golden-tx-group"),
        consumer_group=unique("golden-848"),
        deleted_group=unique("golden-deleted"),
    )
    partitions = len(METADATA_SIZES)
    create_topic(b, w.topic, partitions)
    produce(b, w.topic, partitions, 5)
    classic_group_commits(b, w.topic, w.classic_group, partitions, partitions * 5)
    transactional_commit(b, w.topic, w.tx_group, offset=TX_COMMITTED_OFFSET, commit=True)
    transactional_commit(b, w.topic, w.tx_group, offset=TX_ABORTED_OFFSET, commit=False)
    consumer_protocol_group(cluster, w.topic, w.consumer_group)
    # OffsetDelete on the (now empty) classic group, then DeleteGroups on a classic and a KIP-848 group.
    delete_offset(b, w.classic_group, w.topic, 0)
    classic_group_commits(b, w.topic, w.deleted_group, partitions, partitions * 5)
    delete_groups(b, w.deleted_group, w.consumer_group)
    return w
