"""Helpers for the tail's integration tests on the real sandbox: commits with retries, a running tail, and
an independent full re-read of ``__consumer_offsets`` with kafka-python."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, TypeVar

import kafka.errors as kerr
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata

from collectors.codec import OffsetCommit, decode
from collectors.kafka.tail import AiokafkaTailConsumer
from collectors.tail import OffsetsTail
from collectors.tail_model import PositionStore, TailEvent
from collectors.tail_progress import Backoff
from sandbox.cluster import SandboxCluster

T = TypeVar("T")
TOPIC = "__consumer_offsets"


def retrying(call: Callable[[], T], timeout: float = 60.0) -> T:
    """``call()`` retried on Kafka errors (the lazily created topic, a coordinator moving or down)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except (kerr.KafkaError, OSError, TimeoutError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def ensure_topic(admin: KafkaAdminClient, name: str, partitions: int, replication: int = 1) -> None:
    with suppress(kerr.TopicAlreadyExistsError):
        admin.create_topics([NewTopic(name, partitions, replication)])
    retrying(lambda: admin.describe_topics([name]))


def commit(admin: KafkaAdminClient, group: str, offsets: dict[tuple[str, int], int]) -> None:
    """Commit ``offsets`` for ``group``; every partition must be accepted."""

    def once() -> None:
        result = admin.alter_group_offsets(
            group, {TopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets.items()}
        )
        failed = {tp: err for tp, err in result.items() if err not in (None, kerr.NoError)}
        if failed:
            raise kerr.KafkaError(f"commit refused: {failed}")

    retrying(once)


@dataclass
class ListSink:
    """Keeps every event (thread-safe reads are fine: the tail appends from the test's own loop)."""

    events: list[TailEvent] = field(default_factory=list)

    async def on_events(self, events: Sequence[TailEvent]) -> None:
        self.events.extend(events)

    def commits(self, group: str) -> list[tuple[int, int, OffsetCommit]]:
        return [
            (e.partition, e.offset, e.record)
            for e in self.events
            if isinstance(e.record, OffsetCommit) and e.record.group == group
        ]


@asynccontextmanager
async def running_tail(cluster: SandboxCluster, store: PositionStore | None, sink: ListSink) -> Any:
    """A real tail on ``cluster`` with short timers, stopped (positions saved) on exit."""
    consumer = AiokafkaTailConsumer(cluster.cluster_settings("it"))
    tail = OffsetsTail(
        "it", consumer, sink, store=store, checkpoint_seconds=0.2, end_offsets_seconds=0.5,
        fetch_timeout_ms=200, backoff=Backoff(0.2, 2.0),
    )  # fmt: skip
    tail.start()
    try:
        yield tail
    finally:
        await tail.stop()


async def until(cond: Callable[[], bool], timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached in {timeout} s")
        await asyncio.sleep(0.05)


def reread_commits(bootstrap: str, timeout: float = 60.0) -> list[tuple[int, int]]:
    """(partition, offset) of every OffsetCommit record in ``__consumer_offsets``, by a fresh kafka-python
    read_committed consumer from the beginning to the end offsets seen now."""
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=None,
        enable_auto_commit=False,
        isolation_level="read_committed",
        exclude_internal_topics=False,
        consumer_timeout_ms=1000,
    )
    try:
        tps = [TopicPartition(TOPIC, p) for p in sorted(consumer.partitions_for_topic(TOPIC) or ())]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)
        found: list[tuple[int, int]] = []
        deadline = time.monotonic() + timeout
        while any(consumer.position(tp) < ends[tp] for tp in tps):
            if time.monotonic() > deadline:
                raise AssertionError("re-read did not reach the end offsets")
            for tp, records in consumer.poll(timeout_ms=500, max_records=50_000).items():
                for r in records:
                    if isinstance(decode(r.key, r.value), OffsetCommit):
                        found.append((tp.partition, r.offset))
        return found
    finally:
        consumer.close()


class Committer(threading.Thread):
    """Commits increasing offsets for one group in the background; ``acked`` are the ones Kafka accepted."""

    def __init__(self, bootstrap: str, group: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
        self.group, self.topic = group, topic
        self.bootstrap = bootstrap
        self.acked: list[int] = []
        self.failures = 0
        self.last_error: str | None = None
        self._halt = threading.Event()

    def run(self) -> None:
        offset = 0
        while not self._halt.is_set():
            offset += 1
            try:
                result = self.admin.alter_group_offsets(
                    self.group, {TopicPartition(self.topic, 0): OffsetAndMetadata(offset, "", -1)}
                )
                if all(err in (None, kerr.NoError) for err in result.values()):
                    self.acked.append(offset)
                else:
                    self.failures += 1
                    self.last_error = repr(result)
            except (kerr.KafkaError, OSError, TimeoutError) as exc:
                self.failures += 1
                self.last_error = repr(exc)
                # kafka-python keeps asking a stopped coordinator: start over with a fresh client
                self.admin.close()
                time.sleep(0.2)
                self.admin = retrying(
                    lambda: KafkaAdminClient(bootstrap_servers=self.bootstrap, request_timeout_ms=5000)
                )
            time.sleep(0.01)

    def halt(self) -> None:
        if self._halt.is_set():
            return
        self._halt.set()
        if self.is_alive():
            self.join(30)
        self.admin.close()
