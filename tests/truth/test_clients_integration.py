"""The ground-truth harness's clients and tools against the real sandbox Kafka: every consumer library
reads what the producer had acknowledged, in order, and commits where it stopped; Kafka's own reset tool
moves a stopped group's commit; a standalone consumer commits with its group's id."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from sandbox.cluster import SandboxCluster
from tests.truth import ops
from tests.truth.clients import CLIENTS, JAVA_CLIENTS, start_member
from tests.truth.producer import produce
from tests.truth.records import Acked, Journal, load_acked

pytestmark = pytest.mark.integration


def _name(kind: str) -> str:
    return f"truth-{kind}-{uuid.uuid4().hex[:8]}"


def _produce(kafka: SandboxCluster, tmp_path: Path, topic: str, count: int, partition: int) -> list[Acked]:
    journal = Journal(tmp_path / "acked.jsonl")
    try:
        return produce(kafka.bootstrap_servers, topic, count, journal, partition=partition, prefix=_name("p"))
    finally:
        journal.close()


@pytest.mark.parametrize("client", CLIENTS)
def test_member_subscribed_earliest_stopped_reads_all_in_order_and_commits_end(
    kafka1: SandboxCluster, tmp_path: Path, client: str
) -> None:
    topic, group = _name("t"), _name("g")
    ops.create_topic(kafka1, topic, 1, 1)
    acked = _produce(kafka1, tmp_path, topic, 20, 0)
    assert [a.offset for a in acked] == list(range(20))
    assert load_acked(tmp_path / "acked.jsonl") == acked
    described = ops.describe_topic(kafka1, topic)
    assert described is not None and acked[0].topic_id is not None and len(acked[0].topic_id) == 22

    m = start_member(
        client, kafka1.bootstrap_servers, group, [topic], tmp_path / "reads.jsonl", cluster=kafka1
    )
    try:
        assert m.wait_assigned(60) == [(topic, 0)]
        m.wait_read(0, 19, 60)
    finally:
        m.stop()
    reads = m.reads()
    assert [(r.offset, r.payload) for r in reads] == [(a.offset, a.payload) for a in acked], m.log_tail()
    assert {(r.group, r.topic, r.partition, r.client) for r in reads} == {(group, topic, 0, client)}
    assert ops.committed_offsets(kafka1, group) == {(topic, 0): 20}, m.log_tail()


def test_member_killed_keeps_every_processed_read(kafka1: SandboxCluster, tmp_path: Path) -> None:
    topic, group = _name("t"), _name("g")
    ops.create_topic(kafka1, topic, 1, 1)
    acked = _produce(kafka1, tmp_path, topic, 20, 0)
    m = start_member("kafka-python", kafka1.bootstrap_servers, group, topic, tmp_path / "reads.jsonl")
    try:
        m.wait_read(0, 19, 60)
    finally:
        code = m.kill()
    assert code == -9 and not m.alive()
    assert [r.payload for r in m.reads()] == [a.payload for a in acked]
    assert [e["event"] for e in m.events()][-1] == "exited"


def test_reset_offsets_to_latest_stopped_group_moves_commit_to_log_end(
    kafka1: SandboxCluster, tmp_path: Path
) -> None:
    topic, group = _name("t"), _name("g")
    ops.create_topic(kafka1, topic, 1, 1)
    _produce(kafka1, tmp_path, topic, 20, 0)
    m = start_member("kafka-python", kafka1.bootstrap_servers, group, [topic], tmp_path / "reads.jsonl")
    try:
        m.wait_read(0, 19, 60)
    finally:
        m.stop()
    assert ops.committed_offsets(kafka1, group) == {(topic, 0): 20}
    _produce(kafka1, tmp_path, topic, 15, 0)

    dry = ops.reset_offsets(kafka1, group, topic, "to-latest", execute=False)
    assert [(p.topic, p.partition, p.new_offset) for p in dry] == [(topic, 0, 35)]
    assert ops.committed_offsets(kafka1, group) == {(topic, 0): 20}  # a dry run moves nothing
    plan = ops.reset_offsets(kafka1, group, topic, "--to-latest")
    assert [(p.group, p.topic, p.partition, p.new_offset) for p in plan] == [(group, topic, 0, 35)]
    rows = ops.describe_group(kafka1, group)
    assert [
        (r.topic, r.partition, r.current_offset, r.log_end_offset, r.lag, r.consumer_id) for r in rows
    ] == [(topic, 0, 35, 35, 0, None)]


@pytest.mark.parametrize("client", CLIENTS)
def test_member_standalone_assigned_one_partition_reads_it_and_commits_with_group_id(
    kafka1: SandboxCluster, tmp_path: Path, client: str
) -> None:
    # the Java ones run tests/truth/clients/Standalone.java: the console consumer cannot assign with a group
    topic, group = _name("t"), _name("g")
    ops.create_topic(kafka1, topic, 2, 1)
    _produce(kafka1, tmp_path, topic, 5, 0)
    acked = _produce(kafka1, tmp_path, topic, 12, 1)
    m = start_member(
        client,
        kafka1.bootstrap_servers,
        group,
        [topic],
        tmp_path / "reads.jsonl",
        mode="assign",
        partitions=[1],
        cluster=kafka1,
    )
    try:
        assert m.wait_assigned(60) == [(topic, 1)]
        m.wait_read(1, 11, 60)
    finally:
        m.stop()
    reads = m.reads()
    assert [(r.partition, r.offset, r.payload) for r in reads] == [(1, a.offset, a.payload) for a in acked]
    assert {(r.group, r.topic, r.client) for r in reads} == {(group, topic, client)}
    assert ops.committed_offsets(kafka1, group) == {(topic, 1): 12}, m.log_tail()
    if client in JAVA_CLIENTS:
        assert any(e["event"] == "closed" for e in m.events()), m.log_tail()
