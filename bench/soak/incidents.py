"""Real incidents injected after the operations: each must be caught with the right kind and magnitude.

- ``rewind_classic`` / ``rewind_kip848``: an active member commits 100 below its committed offset and
  reads on: ``offset_rewind`` (critical), 100 replayed.
- ``retention_passes_stuck_group``: the member of the retention topic's group stops reading (still in
  the group) and the topic's retention is cut to 30 s: ``committed_below_log_start`` (critical, cause
  ``retention``) once retention passes it.
- ``unclean_truncation``: the KAFKA_NOTES recipe under a consuming librdkafka group on a topic with
  replicas [1, 2]: ``committed_beyond_log_end`` by 50 (or, when the member's reset commits before a poll
  sees it beyond the end, the move of its commit) and ``log_truncation`` of 50.

Every figure is then judged against what the consumers really read (:mod:`bench.soak.truth`).

Offsets removed under an active member cannot be caused on this Kafka: OffsetDelete is refused for a
topic a member is subscribed to (GROUP_SUBSCRIBED_TO_TOPIC), DeleteGroups for a non-empty group, and
offsets of a group with members never expire (KIP-211).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic

from bench.serve_proc import Serve, until
from bench.soak.world import RETENTION_CONFIGS, World, retrying

UNCLEAN_ELECTION = 1  # ElectLeaders election type

Alert = dict[str, Any]
RETENTION_MS = 30_000


@dataclass(frozen=True)
class Expect:
    """An alert that must appear: its kind, where, and a check of its magnitude."""

    kind: str
    group: str | None
    topic: str
    magnitude: Callable[[dict[str, Any]], bool]
    wanted: str  # the check, for the report
    # other kinds that account for it as well (their figures are judged against the truth only): a
    # consumer that resets and commits before a poll sees its offset beyond the log end is told by the
    # move of its commit instead
    also: tuple[str, ...] = ()

    def matches(self, alert: Alert) -> bool:
        return (
            alert["kind"] in (self.kind, *self.also)
            and alert["topic"] == self.topic
            and (self.group is None or alert["group"] == self.group)
        )

    def caught(self, alert: Alert) -> bool:
        return alert["kind"] != self.kind or self.magnitude(alert["magnitude"])


@dataclass
class Injected:
    name: str
    at: float  # time.time() when the incident happened
    groups: set[str]
    topics: set[str]
    expect: list[Expect]
    found: dict[str, Any] = field(default_factory=dict)

    def owns(self, alert: Alert) -> bool:
        """An alert this incident explains (its group or topic, or a cluster-wide unclean election)."""
        if alert["started_at"] < self.at - 1:
            return False
        if alert["group"] in self.groups or alert["topic"] in self.topics:
            return True
        return self.name == "unclean_truncation" and alert["kind"] in ("unclean_leader_election",)


def rewind(world: World, protocol: str) -> Injected:
    client = f"java-{protocol}"
    group = next(g for g in sorted(world.reserved) if world.clients[g] == client and "rewind" in g)
    member = world.groups[group][0]
    r = world.members.rewind(member, 100)
    n = r.old - r.new

    def replayed_n(m: dict[str, Any]) -> bool:
        return bool(m.get("messages_replayed") == n)

    return Injected(
        f"rewind_{'kip848' if protocol == 'consumer' else protocol}",
        time.time(),
        {group},
        set(),
        [
            Expect(
                "offset_rewind",
                group,
                r.topic,
                replayed_n,
                f"messages_replayed == {n}",
            )
        ],
    )


def retention_passes_stuck_group(world: World, retention_ms: int = RETENTION_MS) -> Injected:
    """The group's member stops reading (still a member), and the topic's retention is shortened to
    ``retention_ms`` (someone trimming a topic that fills a disk)."""
    group = next(g for g in world.reserved if "retention" in g)
    world.members.pause(world.groups[group][0])
    admin = world.admin()
    try:
        # AlterConfigs replaces the topic's whole config: the others are given again
        configs = {**RETENTION_CONFIGS, "retention.ms": str(retention_ms)}
        admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, world.topic_of[group], configs)])
    finally:
        admin.close()
    return Injected(
        "retention_passes_stuck_group",
        time.time(),
        {group},
        {world.topic_of[group]},
        [
            Expect(
                "committed_below_log_start",
                group,
                world.topic_of[group],
                lambda m: (m.get("messages_lost") or 0) > 0,
                "messages_lost > 0",
            )
        ],
    )


def unclean_truncation(world: World, serve: Serve) -> Injected:
    """A topic with replicas [1, 2] and min.insync.replicas 1 (what an unclean election needs; created
    now, so its config_risk belongs to the incident) and a group consuming it with librdkafka
    (``auto.offset.reset`` earliest: LinkedIn's incident), then the recipe."""
    topic = group = f"soak-unclean-{world.suffix}"
    admin = world.admin()
    try:
        admin.create_topics(
            [NewTopic(topic, replica_assignments={0: [1, 2]}, topic_configs={"min.insync.replicas": "1"})]
        )
    finally:
        admin.close()
    world.groups[group], world.clients[group], world.topic_of[group] = [], "librdkafka", topic
    world.reserved.add(group)
    world.traffic.know(topic)
    at = time.time()
    world.new_member(group)
    cluster = world.cluster
    a, b = _leader_and_follower(world, topic)  # the leader, and the follower left behind
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks=1, retries=20)
    try:
        _produce(world, producer, topic, 0, 100)
        until(lambda: _replicated(world, topic, b, 100), 60, f"broker {b} holds the first 100")
        cluster.stop_broker(b)  # controlled shutdown: the ISR shrinks to [a]
        _produce(world, producer, topic, 100, 50)
        # the ISR stays shrunk until the monitor has seen the 150 (a dead broker slows a collection)
        until(lambda: _log_end(serve, topic) == 150, 120, "the monitor sees log end 150")
        until(lambda: serve.committed(group, topic, 0) == 150, 60, "the member commits 150")
        cluster.stop_broker(a)  # the last in-sync replica: the partition is offline
        cluster.start_broker(b)  # out of sync, not eligible for a clean election
        _elect_unclean(world, topic)
        cluster.start_broker(a)  # rejoins as a follower and truncates its log
    finally:
        producer.close(timeout=10)
        for broker_id in (a, b):
            if not cluster.brokers[broker_id].alive():
                cluster.start_broker(broker_id)
    return Injected(
        "unclean_truncation",
        at,
        {group},
        {topic},
        [
            Expect(
                "committed_beyond_log_end",
                group,
                topic,
                lambda m: m.get("beyond") == 50,
                "beyond == 50, or the reset's move within the truth",
                also=("offset_skip", "offset_rewind"),
            ),
            Expect(
                "log_truncation", None, topic, lambda m: m.get("messages_truncated") == 50, "truncated == 50"
            ),
        ],
    )


def _partition(world: World, topic: str) -> dict[str, Any]:
    """The description of ``topic``'s one partition (leader, replicas, ISR)."""
    admin = world.admin()
    try:
        [desc] = admin.describe_topics([topic])
    finally:
        admin.close()
    [part] = desc["partitions"]
    return dict(part)


def _leader_and_follower(world: World, topic: str) -> tuple[int, int]:
    part = _partition(world, topic)
    leader = int(part["leader_id"])
    return leader, next(int(r) for r in part["replica_nodes"] if r != leader)


def _replicated(world: World, topic: str, follower: int, n: int) -> bool:
    """``follower`` holds the partition's first ``n`` messages: in the ISR, with the high watermark (the
    in-sync replicas' least log end) at ``n``."""
    part = _partition(world, topic)
    if follower not in {int(r) for r in part["isr_nodes"]}:
        return False
    consumer = KafkaConsumer(bootstrap_servers=world.cluster.bootstrap_servers)
    try:
        tp = TopicPartition(topic, 0)
        return bool(consumer.end_offsets([tp])[tp] >= n)
    finally:
        consumer.close()


def _log_end(serve: Serve, topic: str) -> int | None:
    return next((p["log_end"] for p in serve.partitions(topic) if p["partition"] == 0), None)


def _produce(world: World, producer: KafkaProducer, topic: str, first: int, n: int) -> None:
    """``n`` messages with payloads unique in the run, each journaled once acknowledged."""
    for i in range(first, first + n):
        payload = f"u{world.suffix}-{i}"
        producer.send(topic, payload.encode(), partition=0).add_callback(world.traffic.acked, payload)
    producer.flush(60)


def _elect_unclean(world: World, topic: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=world.cluster.bootstrap_servers)
    try:
        retrying(lambda: admin.elect_leaders(UNCLEAN_ELECTION, {topic: [0]}))
    finally:
        admin.close()
