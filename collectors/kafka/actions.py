"""Kafka actions on one cluster for the drills: topics, records, committed offsets, cleanup.

The drills (``drills/``) cause incidents on purpose; they reach Kafka only through :class:`KafkaActions`
and :class:`collectors.kafka.member.ActiveMember`, so they need no Kafka client of their own. Admin work
and producing go through kafka-python with the collectors' client settings, security included
(:func:`collectors.kafka.seam.client_kwargs`). Every call is bounded in time and retried on Kafka errors (a
coordinator or leader moving, a topic still being created); what still fails raises
:class:`collectors.errors.KafkaError` saying what was attempted.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import TypeVar

import kafka.errors as kerr
from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata

from collectors.errors import KafkaError
from collectors.kafka.seam import client_kwargs
from collectors.settings import ClusterSettings

T = TypeVar("T")
_RETRIABLE = (kerr.KafkaError, OSError, TimeoutError)
# errors after which an admin client is replaced, not asked again (the cluster changed under it)
_STALE_CLIENT = (
    kerr.UnknownBrokerIdError,
    kerr.NodeNotReadyError,
    kerr.KafkaConnectionError,
    kerr.BrokerNotAvailableError,
    kerr.KafkaTimeoutError,
    OSError,
    TimeoutError,
)


def retried(what: str, call: Callable[[], T], timeout: float = 60.0) -> T:
    """``call()`` retried on Kafka errors (a coordinator or leader moving, a topic still being created)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except _RETRIABLE as exc:
            if time.monotonic() > deadline:
                raise KafkaError(f"{what}: {exc!r}") from exc
            time.sleep(0.3)


class KafkaActions:
    """One cluster, acted on as ``client_id``. Close with :meth:`close`."""

    def __init__(self, cluster: ClusterSettings, client_id: str) -> None:
        self.cluster = cluster
        self.client_id = client_id
        self._admin: KafkaAdminClient | None = None

    def _client(self) -> KafkaAdminClient:
        if self._admin is None:
            self._admin = retried(
                "connect", lambda: KafkaAdminClient(**client_kwargs(self.cluster, self.client_id))
            )
        return self._admin

    def close(self) -> None:
        if self._admin is not None:
            with contextlib.suppress(kerr.KafkaError, OSError):
                self._admin.close()
            self._admin = None

    def _with_admin(self, what: str, call: Callable[[KafkaAdminClient], T], timeout: float = 60.0) -> T:
        """``call(admin)`` retried on Kafka errors; after an error of the client's own (a broker it no
        longer knows, a lost connection) the retry gets a new admin client: kafka-python's keeps the
        controller it found first, and once that broker restarted it may answer every request with
        UnknownBrokerIdError."""

        def attempt() -> T:
            try:
                return call(self._client())
            except _STALE_CLIENT:
                self.close()
                raise

        return retried(what, attempt, timeout)

    # ---------------------------------------------------------------- topics and records

    def create_topic(self, topic: str, replicas: int = 3, on: list[int] | None = None) -> None:
        """One partition, replicated up to ``replicas`` times (fewer on a smaller cluster), or exactly on
        the brokers ``on`` (the first one leads, ``min.insync.replicas`` 1); returns once the partition
        has a leader."""
        if on is None:
            brokers = len(self._with_admin("describe cluster", lambda a: a.describe_cluster())["brokers"])
            factor = max(1, min(replicas, brokers))
            new_topic = NewTopic(topic, 1, factor, topic_configs={"min.insync.replicas": str(min(2, factor))})
        else:
            pinned = {"min.insync.replicas": "1"}
            new_topic = NewTopic(topic, replica_assignments={0: on}, topic_configs=pinned)

        def create(admin: KafkaAdminClient) -> None:
            with contextlib.suppress(kerr.TopicAlreadyExistsError):
                admin.create_topics([new_topic])

        self._with_admin(f"create {topic}", create)

        def led(admin: KafkaAdminClient) -> bool:
            [t] = admin.describe_topics([topic])
            parts = t.get("partitions") or []
            if not parts or parts[0]["leader_id"] < 0:
                raise kerr.LeaderNotAvailableError(f"{topic} has no leader yet")
            return True

        self._with_admin(f"leader of {topic}", led)

    def produce(self, topic: str, count: int) -> None:
        """``count`` small records to partition 0, each acknowledged by every in-sync replica."""
        config = {k: v for k, v in client_kwargs(self.cluster, self.client_id).items() if k in _PRODUCER_KEYS}
        # the collectors' in-flight limit is an admin client's: with it kafka-python drops idempotence
        config.pop("max_in_flight_requests_per_connection", None)
        producer = retried("producer", lambda: KafkaProducer(**config, acks="all", retries=10, linger_ms=5))
        try:
            futures = [producer.send(topic, b"drill-%d" % i, partition=0) for i in range(count)]
            producer.flush(timeout=120)
            for f in futures:
                f.get(timeout=30)
        except kerr.KafkaError as exc:
            raise KafkaError(f"produce to {topic}: {exc!r}") from exc
        finally:
            producer.close(timeout=10)

    def delete_records(self, topic: str, before: int) -> None:
        """Move the log start of partition 0 to ``before`` (what retention does, at once). The answer is
        checked: kafka-python reports a partition's error in it rather than raising."""
        tp = TopicPartition(topic, 0)

        def delete(admin: KafkaAdminClient) -> None:
            answer = admin.delete_records({tp: before}).get(tp) or {}
            if answer.get("error_code") or (answer.get("low_watermark") or -1) < before:
                raise kerr.KafkaError(f"DeleteRecords answered {answer}")

        self._with_admin(f"delete records of {topic}", delete)

    def elect_unclean(self, topic: str) -> None:
        """An unclean leader election of partition 0 (an out-of-sync replica may lead: the log it lacks
        is lost)."""
        self._with_admin(f"unclean election of {topic}", lambda a: a.elect_leaders(1, {topic: [0]}))

    # ---------------------------------------------------------------- committed offsets

    def commit(self, group: str, topic: str, offset: int) -> None:
        """Commit ``offset`` for partition 0 as a group with no member (a stopped consumer's last commit)."""
        offsets = {TopicPartition(topic, 0): OffsetAndMetadata(offset, "", -1)}
        self._with_admin(f"commit for {group}", lambda a: a.alter_group_offsets(group, offsets))

    def delete_offsets(self, group: str, topic: str) -> None:
        """OffsetDelete of partition 0 (refused by the broker while a member subscribes to the topic)."""
        tp = TopicPartition(topic, 0)
        answer = self._with_admin(f"delete offsets of {group}", lambda a: a.delete_group_offsets(group, [tp]))
        refused = [getattr(e, "__name__", str(e)) for e in answer.values() if e is not kerr.NoError]
        if len(answer) != 1 or refused:
            raise KafkaError(f"delete offsets of {group}: the broker answered {refused or answer}")

    # ---------------------------------------------------------------- cleanup

    def remove(self, group: str, topic: str) -> list[str]:
        """Delete the drill's group and topic; what could not be deleted (never raises)."""
        problems = []
        for what, call in (
            (f"group {group}", lambda a: a.delete_groups([group])),
            (f"topic {topic}", lambda a: a.delete_topics([topic])),
        ):
            try:
                self._with_admin(f"delete {what}", call, timeout=30)
            except KafkaError as exc:
                if "GroupIdNotFound" not in str(exc) and "UnknownTopicOrPartition" not in str(exc):
                    problems.append(str(exc))
        return problems


_PRODUCER_KEYS = frozenset(KafkaProducer.DEFAULT_CONFIG)
