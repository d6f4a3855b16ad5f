"""The cluster side of bench/service: populate a size, count what there is, and move 1 % of it every 5 s."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from bench.poll import measure_offsetguard, populate
from sandbox.cluster import SandboxCluster

PARTITIONS_PER_TOPIC = 100
PER_GROUP = 25
TICK_S = 5.0


def layout(size: int) -> tuple[int, int, int]:
    """(topics, groups, group-partitions per group) of a size: 100 partitions a topic, a group per 10."""
    return max(1, size // PARTITIONS_PER_TOPIC), max(1, size // 10), PER_GROUP


def populate_size(cluster: SandboxCluster, size: int) -> None:
    topics, groups, per_group = layout(size)
    populate(cluster, topics, PARTITIONS_PER_TOPIC, groups, per_group)


def expected_committed(cluster: SandboxCluster) -> dict[str, int]:
    """What one full collection sees: partitions, groups and committed group-partitions."""
    return dict(asyncio.run(measure_offsetguard(cluster, cycles=1))["observed"])


class Churn:
    """Every 5 s, one more message on ``share`` of the partitions and their groups' commits moved to it.

    Runs in a thread of the benchmark process (its CPU is not the service's). Group membership follows
    bench/poll's populate: group ``g`` committed on partitions ``g*25 .. g*25+24`` (mod the total).
    """

    def __init__(self, cluster: SandboxCluster, size: int, share: float) -> None:
        self.cluster = cluster
        topics, groups, per_group = layout(size)
        self.tps = [
            TopicPartition(f"bench-{t:04d}", p) for t in range(topics) for p in range(PARTITIONS_PER_TOPIC)
        ]
        self.groups_of: dict[int, list[int]] = {}
        for g in range(groups):
            for k in range(per_group):
                self.groups_of.setdefault((g * per_group + k) % len(self.tps), []).append(g)
        self.per_tick = max(1, round(share * len(self.tps)))
        self.ticks = 0
        self.commits = 0
        self.late_ticks = 0
        self.failed_ticks = 0
        self._cursor = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, daemon=True, name="churn")
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=60)
            self._thread = None

    def figures(self) -> dict[str, Any]:
        return {
            "partitions_per_tick": self.per_tick,
            "tick_s": TICK_S,
            "ticks": self.ticks,
            "commits": self.commits,
            "late_ticks": self.late_ticks,
            "failed_ticks": self.failed_ticks,
        }

    def _run(self) -> None:
        servers = self.cluster.bootstrap_servers
        producer = KafkaProducer(bootstrap_servers=servers, linger_ms=20, acks=1)
        admin = KafkaAdminClient(bootstrap_servers=servers, request_timeout_ms=60_000)
        consumer = KafkaConsumer(bootstrap_servers=servers)
        try:
            with ThreadPoolExecutor(4) as pool:
                while not self._stop.is_set():
                    started = time.monotonic()
                    try:
                        self._tick(producer, admin, consumer, pool)
                    except Exception as exc:  # a tick lost (an answer missing at 100k): counted, go on
                        self.failed_ticks += 1
                        if self.failed_ticks == 1:
                            print(f"churn: a tick failed ({exc!r}); counted in failed_ticks", flush=True)
                    spent = time.monotonic() - started
                    if spent > TICK_S:
                        self.late_ticks += 1
                    self._stop.wait(max(0.0, TICK_S - spent))
        finally:
            producer.close()
            admin.close()
            consumer.close()

    def _tick(
        self,
        producer: KafkaProducer,
        admin: KafkaAdminClient,
        consumer: KafkaConsumer,
        pool: ThreadPoolExecutor,
    ) -> None:
        picked = [(self._cursor + i) % len(self.tps) for i in range(self.per_tick)]
        self._cursor = (self._cursor + self.per_tick) % len(self.tps)
        for i in picked:
            producer.send(self.tps[i].topic, value=b"x", partition=self.tps[i].partition)
        producer.flush(timeout=60)
        ends = consumer.end_offsets([self.tps[i] for i in picked])
        by_group: dict[int, dict[TopicPartition, OffsetAndMetadata]] = {}
        for i in picked:
            for g in self.groups_of.get(i, ()):
                by_group.setdefault(g, {})[self.tps[i]] = OffsetAndMetadata(ends[self.tps[i]], "", -1)

        def commit(item: tuple[int, dict[TopicPartition, OffsetAndMetadata]]) -> int:
            admin.alter_group_offsets(f"bench-group-{item[0]:05d}", item[1])
            return len(item[1])

        self.commits += sum(pool.map(commit, by_group.items()))
        self.ticks += 1
