"""The cluster side of bench/service: populate a size, count what there is, and move 1 % of it every 5 s."""

from __future__ import annotations

import asyncio
import multiprocessing
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

    Runs in a process of its own (its CPU is not the service's, nor the benchmark's): its Kafka client is
    pure Python, and in a thread of the benchmark it held the interpreter lock the scrapes measured there
    need, so a scrape meeting a tick measured the benchmark's own wait (5 s ticks and 15 s scrapes stay
    in phase: one run's scrapes all met them, another's none). Group membership follows bench/poll's
    populate: group ``g`` committed on partitions ``g*25 .. g*25+24`` (mod the total).
    """

    def __init__(self, cluster: SandboxCluster, size: int, share: float) -> None:
        self.servers = cluster.bootstrap_servers
        self.size = size
        self.per_tick = max(1, round(share * churned_partitions(size)))
        context = multiprocessing.get_context("spawn")  # not a fork of a process with threads
        self._context = context
        self._stop = context.Event()
        self._counts = context.Array("q", len(COUNTS))  # what the process did so far (COUNTS order)
        self._process: multiprocessing.process.BaseProcess | None = None

    def start(self) -> None:
        if self._process is None:
            self._stop.clear()
            self._process = self._context.Process(
                target=_run,
                args=(self.servers, self.size, self.per_tick, self._stop, self._counts),
                daemon=True,
                name="churn",
            )
            self._process.start()

    def stop(self) -> None:
        self._stop.set()
        if self._process is not None:
            self._process.join(timeout=60)
            if self._process.is_alive():
                self._process.kill()
                self._process.join(timeout=10)
            elif self._process.exitcode:
                print(f"churn: its process ended with {self._process.exitcode}", flush=True)
            self._process = None

    def figures(self) -> dict[str, Any]:
        counts = dict(zip(COUNTS, self._counts[:], strict=True))
        return {"partitions_per_tick": self.per_tick, "tick_s": TICK_S, **counts}


COUNTS = ("ticks", "commits", "late_ticks", "failed_ticks")


def churned_partitions(size: int) -> int:
    topics, _, _ = layout(size)
    return topics * PARTITIONS_PER_TOPIC


def _run(servers: str, size: int, per_tick: int, stop: Any, counts: Any) -> None:
    """The churn process: a tick every :data:`TICK_S` until ``stop`` is set, counted in ``counts``."""
    topics, groups, per_group = layout(size)
    tps = [TopicPartition(f"bench-{t:04d}", p) for t in range(topics) for p in range(PARTITIONS_PER_TOPIC)]
    groups_of: dict[int, list[int]] = {}
    for g in range(groups):
        for k in range(per_group):
            groups_of.setdefault((g * per_group + k) % len(tps), []).append(g)
    ticks, commits, late, failed = range(len(COUNTS))
    producer = KafkaProducer(bootstrap_servers=servers, linger_ms=20, acks=1)
    admin = KafkaAdminClient(bootstrap_servers=servers, request_timeout_ms=60_000)
    consumer = KafkaConsumer(bootstrap_servers=servers)
    cursor = 0
    try:
        with ThreadPoolExecutor(4) as pool:
            while not stop.is_set():
                started = time.monotonic()
                picked = [(cursor + i) % len(tps) for i in range(per_tick)]
                cursor = (cursor + per_tick) % len(tps)
                try:
                    counts[commits] += _tick(producer, admin, consumer, pool, picked, tps, groups_of)
                    counts[ticks] += 1
                except Exception as exc:  # a tick lost (an answer missing at 100k): counted, go on
                    counts[failed] += 1
                    if counts[failed] == 1:
                        print(f"churn: a tick failed ({exc!r}); counted in failed_ticks", flush=True)
                spent = time.monotonic() - started
                if spent > TICK_S:
                    counts[late] += 1
                stop.wait(max(0.0, TICK_S - spent))
    finally:
        producer.close()
        admin.close()
        consumer.close()


def _tick(
    producer: KafkaProducer,
    admin: KafkaAdminClient,
    consumer: KafkaConsumer,
    pool: ThreadPoolExecutor,
    picked: list[int],
    tps: list[TopicPartition],
    groups_of: dict[int, list[int]],
) -> int:
    """One message on each partition ``picked`` (indices in ``tps``), then its groups' commits moved to
    its end: how many commits."""
    for i in picked:
        producer.send(tps[i].topic, value=b"x", partition=tps[i].partition)
    producer.flush(timeout=60)
    ends = consumer.end_offsets([tps[i] for i in picked])
    by_group: dict[int, dict[TopicPartition, OffsetAndMetadata]] = {}
    for i in picked:
        for g in groups_of.get(i, ()):
            by_group.setdefault(g, {})[tps[i]] = OffsetAndMetadata(ends[tps[i]], "", -1)

    def commit(item: tuple[int, dict[TopicPartition, OffsetAndMetadata]]) -> int:
        admin.alter_group_offsets(f"bench-group-{item[0]:05d}", item[1])
        return len(item[1])

    return sum(pool.map(commit, by_group.items()))
