"""Helpers and fixtures for collector integration tests against the real sandbox (`kafka1`, `kafka3`)."""

from __future__ import annotations

import asyncio
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import kafka.errors as kerr
import pytest
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.structs import OffsetAndMetadata, TopicPartition

from collectors.committed import CommittedCollector
from collectors.configs import ConfigsCollector
from collectors.groups import GroupsCollector
from collectors.kafka.seam import KafkaPythonSeam
from collectors.metadata import MetadataCollector
from collectors.offsets import OffsetsCollector
from sandbox import jvm

CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"


@dataclass
class Collectors:
    """The five collectors of one cluster over one real seam; metadata re-read when older than 0 s."""

    seam: KafkaPythonSeam
    metadata: MetadataCollector
    offsets: OffsetsCollector
    groups: GroupsCollector
    committed: CommittedCollector
    configs: ConfigsCollector

    def cycle(self) -> tuple[Any, ...]:
        """Metadata, then the other four concurrently, as the scheduler runs them."""

        async def run() -> tuple[Any, ...]:
            meta = await self.metadata.collect()
            rest = await asyncio.gather(
                self.offsets.collect(),
                self.groups.collect(),
                self.committed.collect(),
                self.configs.collect(),
            )
            return (meta, *rest)

        return asyncio.run(run())


def build_collectors(cluster: Any, name: str) -> Collectors:
    seam = KafkaPythonSeam(cluster.cluster_settings(name))
    meta = MetadataCollector(seam, name)

    def fresh():  # type: ignore[no-untyped-def]
        return meta.latest(max_age_s=0.5)

    return Collectors(
        seam,
        meta,
        OffsetsCollector(seam, name, fresh),
        GroupsCollector(seam, name, fresh),
        CommittedCollector(seam, name, fresh),
        ConfigsCollector(seam, name, fresh),
    )


@pytest.fixture
def collectors_for() -> Iterator[Callable[[Any], Collectors]]:
    """``collectors_for(cluster)``: collectors over a fresh seam, closed after the test."""
    made: list[Collectors] = []

    def make(cluster: Any) -> Collectors:
        made.append(build_collectors(cluster, "it"))
        return made[-1]

    yield make
    for c in made:
        c.seam.close()


@pytest.fixture
def admin_for() -> Iterator[Callable[[Any], KafkaAdminClient]]:
    made: list[KafkaAdminClient] = []

    def make(cluster: Any) -> KafkaAdminClient:
        made.append(KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers.split(",")))
        return made[-1]

    yield make
    for a in made:
        a.close()


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def create_topic(
    admin: KafkaAdminClient, name: str, partitions: int, rf: int = 1, configs: dict[str, str] | None = None
) -> None:
    admin.create_topics([NewTopic(name, partitions, rf, topic_configs=configs or None)])
    wait_for(lambda: name in admin.list_topics(), what=f"topic {name}")


def produce(cluster: Any, topic: str, counts: dict[int, int]) -> None:
    """Exactly ``counts[p]`` records to each partition ``p`` (acks=all, no retries that could duplicate)."""
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers.split(","), acks="all")
    try:
        for p, n in counts.items():
            for i in range(n):
                producer.send(topic, f"{p}-{i}".encode(), partition=p)
        producer.flush(timeout=30)
    finally:
        producer.close()


def wait_for(check: Callable[[], Any], *, what: str, timeout: float = 60.0, every: float = 0.5) -> Any:
    """Poll ``check`` until it returns something truthy; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(every)


def start_console_consumer(cluster: Any, topic: str, group: str) -> subprocess.Popen[bytes]:
    """Kafka's console consumer in a KIP-848 (``group.protocol=consumer``) group, in the background."""
    args = (
        "--bootstrap-server", cluster.bootstrap_servers, "--topic", topic, "--group", group,
        "--consumer-property", "group.protocol=consumer", "--from-beginning",
    )  # fmt: skip
    cmd = jvm.java_command(cluster.lib, CONSOLE_CONSUMER, args, jvm.TOOL_JVM_OPTS)
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def commit(
    admin: KafkaAdminClient, group: str, topic: str, offsets: dict[int, int], metadata: str = ""
) -> None:
    """Commit ``offsets`` for ``group`` as an admin reset does; retried while the coordinator loads."""

    def attempt() -> bool:
        try:
            tps = {
                TopicPartition(topic, p): OffsetAndMetadata(k, metadata or f"m{k}", None)
                for p, k in offsets.items()
            }
            results = admin.alter_group_offsets(group, tps)
        except kerr.KafkaError as exc:
            if exc.retriable:
                return False
            raise
        return all(err is kerr.NoError for err in results.values())

    wait_for(attempt, what=f"commit of {group}")
