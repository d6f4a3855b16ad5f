"""The tail against the real sandbox: exact events, tombstones, broker restarts, resume, readiness."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from kafka import KafkaAdminClient, TopicPartition

from collectors.codec import GroupTombstone, OffsetCommitTombstone, partition_for
from collectors.kafka import tail as tail_kafka
from collectors.kafka.tail import AiokafkaTailConsumer
from sandbox.cluster import SandboxCluster
from service.app import create_app
from service.runtime import Runtime
from service.settings import Settings, load_settings
from service.state import LatestObservations
from service.wiring import build_cluster_tail
from store import Store
from store.settings import StoreSettings
from tests.collectors.tail.sandbox_it import (
    Committer,
    ListSink,
    commit,
    ensure_topic,
    reread_commits,
    retrying,
    running_tail,
    until,
)
from tests.collectors.tail.test_tail_service import GatedSink

pytestmark = pytest.mark.integration
AUTO_CREATE_WAIT_S = 2.0


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


async def test_tail_kafka1_commits_and_tombstones_exact(kafka1: SandboxCluster) -> None:
    admin = KafkaAdminClient(bootstrap_servers=kafka1.bootstrap_servers)
    topic, group = _name("tail-a"), _name("tail-a-g")
    ensure_topic(admin, topic, 3)
    sink = ListSink()
    try:
        async with running_tail(kafka1, None, sink):
            await asyncio.to_thread(commit, admin, group, {(topic, 0): 5, (topic, 1): 7, (topic, 2): 9})
            await until(lambda: len(sink.commits(group)) == 3, what="3 commits")
            first = [TopicPartition(topic, 0)]
            await asyncio.to_thread(retrying, lambda: admin.delete_group_offsets(group, first))
            await until(lambda: _tombstones(sink, group) == {0}, what="offset tombstone")
            await asyncio.to_thread(retrying, lambda: admin.delete_groups([group]))
            await until(lambda: _tombstones(sink, group) == {0, 1, 2}, what="group deletion tombstones")
            await until(lambda: any(_is_group_tombstone(e.record, group) for e in sink.events), 10)
    finally:
        admin.close()

    commits = sorted((r.topic, r.partition, r.offset) for _, _, r in sink.commits(group))
    assert commits == [(topic, 0, 5), (topic, 1, 7), (topic, 2, 9)]
    source = {p for p, _, _ in sink.commits(group)}
    assert len(source) == 1  # a group lives in one __consumer_offsets partition


async def test_tail_kafka1_held_fetch_is_answered_by_the_next_commit(
    kafka1: SandboxCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The broker holds a caught-up tail's fetch for up to ``FETCH_MAX_WAIT_MS``; a commit meanwhile
    answers it at once. Held 8 s here, a commit made 1 s into the hold arrives within 5 s, not after 7."""
    monkeypatch.setattr(tail_kafka, "FETCH_MAX_WAIT_MS", 8_000)
    admin = KafkaAdminClient(bootstrap_servers=kafka1.bootstrap_servers)
    topic, first, second = _name("tail-h"), _name("tail-h-g"), _name("tail-h-g")
    ensure_topic(admin, topic, 1)
    sink = ListSink()
    try:
        async with running_tail(kafka1, None, sink) as tail:
            await asyncio.to_thread(commit, admin, first, {(topic, 0): 1})
            await until(lambda: len(sink.commits(first)) == 1 and tail.caught_up, what="first commit")
            await asyncio.sleep(1.0)  # the tail's next fetch is now held by the broker
            await asyncio.to_thread(commit, admin, second, {(topic, 0): 2})
            await until(lambda: len(sink.commits(second)) == 1, 5.0, what="the commit during a held fetch")
    finally:
        admin.close()


def _tombstones(sink: ListSink, group: str) -> set[int]:
    return {
        e.record.partition
        for e in sink.events
        if isinstance(e.record, OffsetCommitTombstone) and e.record.group == group
    }


def _is_group_tombstone(record: object, group: str) -> bool:
    return isinstance(record, GroupTombstone) and record.group == group


async def test_tail_kafka3_broker_restarts_lose_and_duplicate_nothing(kafka3: SandboxCluster) -> None:
    admin = KafkaAdminClient(bootstrap_servers=kafka3.bootstrap_servers)
    topic, group = _name("tail-b"), _name("tail-b-g")
    ensure_topic(admin, topic, 1, replication=3)
    commit(admin, group, {(topic, 0): 0})  # creates __consumer_offsets if needed
    meta = admin.describe_topics(["__consumer_offsets"])[0]
    source = partition_for(group, len(meta["partitions"]))
    leader = next(p["leader_id"] for p in meta["partitions"] if p["partition_index"] == source)
    other = next(b for b in kafka3.brokers if b != leader)
    sink = ListSink()
    committer = Committer(kafka3.bootstrap_servers, group, topic)
    try:
        async with running_tail(kafka3, None, sink) as tail:
            committer.start()
            await until(lambda: len(committer.acked) > 20, what="background commits")
            for broker in (leader, other):
                await asyncio.to_thread(kafka3.stop_broker, broker)
                want = len(committer.acked) + 5
                await until(lambda w=want: len(committer.acked) > w, 60, f"commits, {broker} down")
                await asyncio.to_thread(kafka3.start_broker, broker)
            await asyncio.to_thread(committer.halt)
            last = committer.acked[-1]
            await until(lambda: max((r.offset for _, _, r in sink.commits(group)), default=-1) >= last)
            ends = await asyncio.to_thread(_end_offsets, kafka3.bootstrap_servers)
            await until(lambda: all(tail.progress.delivered.get(p, -1) >= n for p, n in ends.items()))
    finally:
        committer.halt()
        for broker_id, node in kafka3.brokers.items():
            if not node.alive():
                kafka3.start_broker(broker_id)
        admin.close()

    emitted = [(e.partition, e.offset) for e in sink.events if type(e.record).__name__ == "OffsetCommit"]
    duplicates = [k for k, n in Counter(emitted).items() if n > 1]
    assert duplicates == []
    reread = await asyncio.to_thread(reread_commits, kafka3.bootstrap_servers)
    assert set(emitted) == set(reread)
    seen = {r.offset for _, _, r in sink.commits(group)}
    assert set(committer.acked) <= seen, f"acked commits missing: {sorted(set(committer.acked) - seen)[:10]}"
    assert tail.figures().decode_errors == 0


def _end_offsets(bootstrap: str) -> dict[int, int]:
    from kafka import KafkaConsumer

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    count = len(admin.describe_topics(["__consumer_offsets"])[0]["partitions"])
    admin.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed")
    try:
        tps = [TopicPartition("__consumer_offsets", p) for p in range(count)]
        return {tp.partition: n for tp, n in consumer.end_offsets(tps).items()}
    finally:
        consumer.close()


async def test_tail_kafka1_restart_with_same_store_emits_only_new(
    kafka1: SandboxCluster, tmp_path: Path
) -> None:
    admin = KafkaAdminClient(bootstrap_servers=kafka1.bootstrap_servers)
    topic, group = _name("tail-c"), _name("tail-c-g")
    ensure_topic(admin, topic, 2)
    store = Store.open(StoreSettings(path=tmp_path / "og.db"))
    first, second = ListSink(), ListSink()
    try:
        async with running_tail(kafka1, store, first) as tail:
            await asyncio.to_thread(commit, admin, group, {(topic, 0): 1, (topic, 1): 2})
            await until(lambda: len(first.commits(group)) == 2 and tail.caught_up)
        await asyncio.to_thread(commit, admin, group, {(topic, 0): 100, (topic, 1): 200})
        async with running_tail(kafka1, store, second) as tail:
            await until(lambda: len(second.commits(group)) == 2 and tail.caught_up)
    finally:
        store.close()
        admin.close()

    assert sorted(r.offset for _, _, r in second.commits(group)) == [100, 200]
    keys_first = {(e.partition, e.offset) for e in first.events}
    assert keys_first.isdisjoint((e.partition, e.offset) for e in second.events)


async def test_tail_kafka1_partition_count_asks_one_topic_creates_none(kafka1: SandboxCluster) -> None:
    admin = KafkaAdminClient(bootstrap_servers=kafka1.bootstrap_servers)
    topic, absent = _name("tail-count"), _name("tail-absent")
    ensure_topic(admin, topic, 3)
    # a commit: __consumer_offsets exists
    await asyncio.to_thread(commit, admin, _name("tail-count-g"), {(topic, 0): 1})
    consumer = AiokafkaTailConsumer(kafka1.cluster_settings("it"))
    await consumer.start()
    try:
        # the broker auto-creates topics (its default; a moment after the answer), but not for this question
        assert await consumer.partition_count(absent) is None
        asked = time.monotonic()
        offsets_partitions = len(admin.describe_topics(["__consumer_offsets"])[0]["partitions"])
        assert await consumer.partition_count() == offsets_partitions
        assert await consumer.partition_count(topic) == 3
        while time.monotonic() - asked < AUTO_CREATE_WAIT_S:  # asked with creation allowed, it would be there
            assert absent not in admin.list_topics()
            await asyncio.sleep(0.2)
    finally:
        await consumer.stop()
        admin.close()


def test_readyz_real_tail_503_until_caught_up(kafka1: SandboxCluster, tmp_path: Path) -> None:
    admin = KafkaAdminClient(bootstrap_servers=kafka1.bootstrap_servers)
    topic = _name("tail-d")
    ensure_topic(admin, topic, 1)
    commit(admin, _name("tail-d-g"), {(topic, 0): 3})  # at least one record to catch up with
    admin.close()
    sink = GatedSink()
    settings = load_settings(clusters=[kafka1.cluster_settings("sb").model_dump()])

    def factory(s: Settings) -> Runtime:
        tail = build_cluster_tail(s.clusters[0], s, store=None, sink=sink)
        return Runtime(s, store=None, latest=LatestObservations(), jobs=[], tails=[tail])

    with TestClient(create_app(settings, runtime_factory=factory)) as client:
        held = client.get("/readyz")
        time.sleep(1.0)  # the tail has connected and holds its first batch at the sink
        still = client.get("/readyz")
        sink.gate.set()
        deadline = time.monotonic() + 30
        while (ready := client.get("/readyz")).status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.05)

    assert (held.status_code, still.status_code) == (503, 503)
    assert still.json()["reasons"] == ["tail:sb catching up"]
    assert ready.status_code == 200
    assert ready.json()["tail"][0]["caught_up"] is True and sink.events > 0
