"""The soak's cluster and workload: a 3-broker sandbox with short retention checks and offset expiry,
traffic topics consumed by groups over the four clients (kafka-python, aiokafka, librdkafka, and Java
classic and KIP-848), steady produce traffic whose every acknowledged message is journaled (a unique
payload each, :class:`tests.truth.records.Acked`), and the spare parts the operations use
(tool-committed groups, unused topics)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kafka.errors as kerr
from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata

from bench.soak.members import Members
from sandbox.cluster import SandboxCluster, start_sandbox
from tests.truth.producer import topic_id
from tests.truth.records import Acked, Journal

OFFSETS_RETENTION_MINUTES = 1  # Empty groups' offsets expire after a minute (checked every 5 s)
BROKER_PROPERTIES = {
    "offsets.retention.minutes": OFFSETS_RETENTION_MINUTES,
    "offsets.retention.check.interval.ms": 5000,
    "log.retention.check.interval.ms": 5000,
    "log.cleaner.backoff.ms": 5000,
}
# Topics as a careful operator configures them (replication 3, min.insync.replicas 2: no config_risk)
SAFE = {"min.insync.replicas": "2"}
# Retention deletes consumed data all along (segments of a tenth of it), but keeps longer than an outage
# and the consumers' recovery from it: a shorter one loses unread messages for real (an outage of 150 s
# under 2 minutes of retention did, in a trial run).
TRAFFIC_RETENTION_MS = 600_000
COMPACT_CONFIGS = {
    **SAFE,
    "cleanup.policy": "compact",
    "segment.ms": "10000",
    "min.cleanable.dirty.ratio": "0.01",
}
# the retention incident's topic: as the others until the incident shortens it (incidents.RETENTION_MS)
RETENTION_CONFIGS = {**SAFE, "retention.ms": str(TRAFFIC_RETENTION_MS), "segment.ms": "5000"}
# The groups' clients, in turn (the incidents' groups are Java's: only a Java member can be rewound or
# paused from outside); a Java group is KIP-848 every other time.
CLIENT_CYCLE = ("kafka-python", "aiokafka", "librdkafka", "java")


def traffic_configs(retention_ms: int) -> dict[str, str]:
    return {**SAFE, "retention.ms": str(retention_ms), "segment.ms": str(retention_ms // 10)}


def start_cluster(directory: Path) -> SandboxCluster:
    return start_sandbox(directory, brokers=3, broker_properties=BROKER_PROPERTIES)


class Traffic(threading.Thread):
    """``rate`` messages a second spread over ``topics`` (keyed on the compacted ones); send errors
    during restarts and outages are counted, not raised. A producer that has had no acknowledgement for
    :data:`STALLED_S` is replaced: after the whole cluster was down, kafka-python's producer could stay
    without metadata for good (a trial soak produced nothing after its outage)."""

    STALLED_S = 30.0

    def __init__(
        self, cluster: SandboxCluster, topics: list[str], keyed: list[str], rate: float, acked: Path
    ) -> None:
        super().__init__(daemon=True, name="soak-traffic")
        self.cluster = cluster
        self.producer = self._producer()
        self.topics, self.keyed, self.rate = list(topics), set(keyed), rate
        self.ids = {t: topic_id(cluster.bootstrap_servers, t) for t in self.topics}
        self.acked_journal = Journal(acked)
        self._journal_lock = threading.Lock()
        self.sent = self.errors = self.replaced = 0
        self.acked_at = time.monotonic()
        self._halt = threading.Event()

    def _producer(self) -> KafkaProducer:
        return KafkaProducer(
            bootstrap_servers=self.cluster.bootstrap_servers,
            acks="all",
            retries=5,
            linger_ms=50,
            max_block_ms=5000,
        )

    def _replace(self) -> None:
        """A new producer (the old one closed); tried again after :data:`STALLED_S` if none can start."""
        self.acked_at = time.monotonic()
        try:
            fresh = self._producer()
        except kerr.KafkaError:  # no broker reachable yet
            return
        with suppress(kerr.KafkaError):
            self.producer.close(timeout=0)
        self.producer = fresh
        self.replaced += 1

    def know(self, topic: str) -> None:
        """Journal acknowledgements of ``topic`` too (another producer's, through :meth:`acked`)."""
        self.ids[topic] = topic_id(self.cluster.bootstrap_servers, topic)

    def acked(self, payload: str, meta: Any) -> None:
        """A send's callback: journal ``payload`` where it landed."""
        entry = Acked(meta.topic, self.ids[meta.topic], meta.partition, meta.offset, payload, time.time())
        with self._journal_lock:  # a replaced producer's last callbacks may overlap the new one's
            self.acked_journal.write(entry)

    def _acked(self, payload: str, meta: Any) -> None:
        self.acked_at = time.monotonic()
        self.acked(payload, meta)

    def run(self) -> None:
        n = 0
        while not self._halt.wait(1.0 / self.rate):
            topic = self.topics[n % len(self.topics)]
            key = b"k%d" % (n % 20) if topic in self.keyed else None
            payload = f"m{n}"
            try:
                self.producer.send(topic, payload.encode(), key=key).add_callback(self._acked, payload)
                self.sent += 1
            except kerr.KafkaError:
                self.errors += 1
            n += 1
            if time.monotonic() - self.acked_at > self.STALLED_S:
                self._replace()
        with suppress(kerr.KafkaError):
            self.producer.close(timeout=10)
        with self._journal_lock:
            self.acked_journal.close()

    def halt(self) -> None:
        self._halt.set()
        self.join(30)


@dataclass
class World:
    cluster: SandboxCluster
    members: Members
    traffic: Traffic
    suffix: str
    topics: list[str]  # consumed traffic topics
    groups: dict[str, list[str]]  # group -> its members
    clients: dict[str, str]  # group -> kafka-python | aiokafka | librdkafka | java-classic | java-consumer
    spare_topics: list[str] = field(default_factory=list)  # unused: deleted by an operation
    tool_groups: list[str] = field(default_factory=list)  # committed by a tool, never consumed
    topic_of: dict[str, str] = field(default_factory=dict)  # group -> the topic its members subscribe to
    reserved: set[str] = field(default_factory=set)  # groups the incidents use: never retired
    counters: dict[str, int] = field(default_factory=dict)  # round-robin positions of the operations
    started: dict[str, float] = field(default_factory=dict)  # group -> when its first member started
    # group -> when it was deleted, and its committed offsets then
    retired: dict[str, tuple[float, dict[tuple[str, int], int]]] = field(default_factory=dict)
    n_members: int = 0
    # the monitor's view of a committed offset (group, topic, partition; None: not seen), once it runs
    monitor_committed: Callable[[str, str, int], int | None] | None = None

    def free(self, members: int | None = None, at_least: int = 1) -> list[str]:
        """Groups the operations may change (not the incidents'), with ``members`` / ``at_least`` members."""
        return [
            g
            for g, ms in self.groups.items()
            if g not in self.reserved and (len(ms) == members if members is not None else len(ms) >= at_least)
        ]

    def admin(self) -> KafkaAdminClient:
        return KafkaAdminClient(bootstrap_servers=self.cluster.bootstrap_servers)

    def new_member(self, group: str) -> str:
        [member] = self.new_members([group])
        return member

    def new_members(self, groups: list[str]) -> list[str]:
        """A new member for each of ``groups`` (a group twice: two), started together; their ids."""
        specs = []
        for group in groups:
            self.n_members += 1
            specs.append((f"m{self.n_members}", group, self.topic_of[group], self.clients[group]))
            self.started.setdefault(group, time.time())
        self.members.start_all(specs)
        for member, group, _, _ in specs:
            self.groups[group].append(member)
        return [member for member, *_ in specs]


def build(
    cluster: SandboxCluster,
    workdir: Path,
    n_groups: int,
    n_topics: int,
    rate: float,
    retention_ms: int = TRAFFIC_RETENTION_MS,
) -> World:
    """Topics, then ``n_groups`` groups (their clients in turn, :data:`CLIENT_CYCLE`; every fifth with two
    members) and three the incidents use (Java), traffic, two tool-committed groups and two unused
    topics."""
    suffix = uuid.uuid4().hex[:4]
    topics = [f"soak-t{i}-{suffix}" for i in range(n_topics)]
    compact = f"soak-compact-{suffix}"
    moving = f"soak-moving-{suffix}"  # reassigned (its replicas reordered: the preferred leader moves)
    spare = [f"soak-unused{i}-{suffix}" for i in range(2)]
    retention = f"soak-retention-{suffix}"  # a minute of retention: passes a stuck group (incidents)
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        admin.create_topics(
            [NewTopic(t, 3, 3, topic_configs=traffic_configs(retention_ms)) for t in topics]
            + [
                NewTopic(compact, 2, 3, topic_configs=COMPACT_CONFIGS),
                NewTopic(moving, 2, 3, topic_configs=SAFE),
            ]
            + [NewTopic(t, 1, 3, topic_configs=SAFE) for t in spare]
            + [NewTopic(retention, 1, 3, topic_configs=RETENTION_CONFIGS)]
        )
    finally:
        admin.close()
    consumed = [*topics, compact, moving]
    members = Members(cluster, workdir)
    traffic = Traffic(cluster, [*consumed, retention], [compact], rate, workdir / "acked.jsonl")
    world = World(cluster, members, traffic, suffix, consumed, {}, {})
    world.spare_topics = spare
    for i in range(n_groups):
        group = f"soak-g{i}-{suffix}"
        world.groups[group] = []
        client = CLIENT_CYCLE[i % len(CLIENT_CYCLE)]
        if client == "java":
            client = "java-consumer" if (i // len(CLIENT_CYCLE)) % 2 else "java-classic"
        world.clients[group] = client
        world.topic_of[group] = consumed[i % len(consumed)]
    for name, topic, client in (
        ("rewind-classic", topics[0], "java-classic"),
        ("rewind-kip848", topics[1], "java-consumer"),
        ("retention", retention, "java-classic"),
    ):  # the incidents' groups
        group = f"soak-{name}-{suffix}"
        world.groups[group], world.clients[group], world.topic_of[group] = [], client, topic
        world.reserved.add(group)
    world.traffic.start()
    try:
        world.new_members(
            [
                g
                for i, g in enumerate(world.groups)
                for _ in range(2 if i % 5 == 0 and g not in world.reserved else 1)
            ]
        )
    except BaseException:
        world.traffic.halt()
        members.close()
        raise
    for i in range(2):
        group = f"soak-tool{i}-{suffix}"
        tool_commit(cluster, group, {(t, 0): 0 for t in spare})  # unconsumed topics: nothing to lose
        world.tool_groups.append(group)
    return world


def tool_commit(cluster: SandboxCluster, group: str, offsets: dict[tuple[str, int], int]) -> None:
    """Commit ``offsets`` for ``group`` as an admin tool does (no member); retried while coordinators load."""
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        tps = {TopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets.items()}
        retrying(lambda: admin.alter_group_offsets(group, tps))
    finally:
        admin.close()


def retrying(call: Callable[[], object], seconds: float = 60.0) -> None:
    """``call()`` again every second while it raises a Kafka error (a coordinator loading, a group not
    Empty yet, a leader being elected), for at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            call()
            return
        except kerr.KafkaError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)
