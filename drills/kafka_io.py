"""The drills' Kafka I/O, in one place: topics, records, committed offsets and an active group member.

Admin work and producing go through kafka-python (the collectors' client settings, security included);
the active member is an aiokafka consumer in a thread of its own (a real member of the group: it joins,
is assigned the partition, heartbeats, and commits as an application does). Every call is bounded in
time; Kafka errors become :class:`DrillError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import kafka.errors as kerr
from aiokafka import AIOKafkaConsumer
from aiokafka.structs import TopicPartition as AioPartition
from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata

from collectors.errors import OffsetguardError
from collectors.kafka.seam import client_kwargs
from collectors.kafka.tail import consumer_kwargs
from collectors.settings import ClusterSettings
from drills.brokers import Brokers

T = TypeVar("T")
CLIENT_ID = "offsetguard-drill"
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


class DrillError(OffsetguardError):
    """A drill's Kafka action failed (the cluster refused it, or it did not finish in time)."""


def retried(what: str, call: Callable[[], T], timeout: float = 60.0) -> T:
    """``call()`` retried on Kafka errors (a coordinator or leader moving, a topic still being created)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except _RETRIABLE as exc:
            if time.monotonic() > deadline:
                raise DrillError(f"{what}: {exc!r}") from exc
            time.sleep(0.3)


class DrillKafka:
    """One cluster, as the drills act on it. Close with :meth:`close`."""

    def __init__(self, cluster: ClusterSettings, brokers: Brokers | None = None) -> None:
        self.cluster = cluster
        self._brokers = brokers
        self._admin: KafkaAdminClient | None = None

    def brokers(self, needed: int) -> Brokers:
        """Broker control, for the drills that stop brokers: a sandbox's with at least ``needed`` brokers."""
        if self._brokers is None:
            raise DrillError(
                "this drill stops brokers: it runs only on a sandbox (offsetguard drill KIND --sandbox DIR)"
            )
        if len(self._brokers.ids()) < needed:
            raise DrillError(
                f"this drill needs {needed} brokers, the sandbox has {len(self._brokers.ids())}"
                " (offsetguard sandbox up --brokers 3)"
            )
        return self._brokers

    def admin(self) -> KafkaAdminClient:
        if self._admin is None:
            self._admin = retried(
                "connect", lambda: KafkaAdminClient(**client_kwargs(self.cluster, CLIENT_ID))
            )
        return self._admin

    def close(self) -> None:
        if self._admin is not None:
            with contextlib.suppress(kerr.KafkaError, OSError):
                self._admin.close()
            self._admin = None

    def with_admin(self, what: str, call: Callable[[KafkaAdminClient], T], timeout: float = 60.0) -> T:
        """``call(admin)`` retried on Kafka errors; after an error of the client's own (a broker it no
        longer knows, a lost connection) the retry gets a new admin client: kafka-python's keeps the
        controller it found first, and once that broker restarted it may answer every request with
        UnknownBrokerIdError."""

        def attempt() -> T:
            try:
                return call(self.admin())
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
            brokers = len(self.with_admin("describe cluster", lambda a: a.describe_cluster())["brokers"])
            factor = max(1, min(replicas, brokers))
            new_topic = NewTopic(topic, 1, factor, topic_configs={"min.insync.replicas": str(min(2, factor))})
        else:
            pinned = {"min.insync.replicas": "1"}
            new_topic = NewTopic(topic, replica_assignments={0: on}, topic_configs=pinned)

        def create(admin: KafkaAdminClient) -> None:
            with contextlib.suppress(kerr.TopicAlreadyExistsError):
                admin.create_topics([new_topic])

        self.with_admin(f"create {topic}", create)

        def led(admin: KafkaAdminClient) -> bool:
            [t] = admin.describe_topics([topic])
            parts = t.get("partitions") or []
            if not parts or parts[0]["leader_id"] < 0:
                raise kerr.LeaderNotAvailableError(f"{topic} has no leader yet")
            return True

        self.with_admin(f"leader of {topic}", led)

    def produce(self, topic: str, count: int) -> None:
        """``count`` small records to partition 0, each acknowledged by every in-sync replica."""
        config = {k: v for k, v in client_kwargs(self.cluster, CLIENT_ID).items() if k in _PRODUCER_KEYS}
        # the collectors' in-flight limit is an admin client's: with it kafka-python drops idempotence
        config.pop("max_in_flight_requests_per_connection", None)
        producer = retried("producer", lambda: KafkaProducer(**config, acks="all", retries=10, linger_ms=5))
        try:
            futures = [producer.send(topic, b"drill-%d" % i, partition=0) for i in range(count)]
            producer.flush(timeout=120)
            for f in futures:
                f.get(timeout=30)
        except kerr.KafkaError as exc:
            raise DrillError(f"produce to {topic}: {exc!r}") from exc
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

        self.with_admin(f"delete records of {topic}", delete)

    def elect_unclean(self, topic: str) -> None:
        """An unclean leader election of partition 0 (an out-of-sync replica may lead: the log it lacks
        is lost)."""
        self.with_admin(f"unclean election of {topic}", lambda a: a.elect_leaders(1, {topic: [0]}))

    # ---------------------------------------------------------------- committed offsets

    def commit(self, group: str, topic: str, offset: int) -> None:
        """Commit ``offset`` for partition 0 as a group with no member (a stopped consumer's last commit)."""
        offsets = {TopicPartition(topic, 0): OffsetAndMetadata(offset, "", -1)}
        self.with_admin(f"commit for {group}", lambda a: a.alter_group_offsets(group, offsets))

    def delete_offsets(self, group: str, topic: str) -> None:
        """OffsetDelete of partition 0 (refused by the broker while a member subscribes to the topic)."""
        tp = TopicPartition(topic, 0)
        answer = self.with_admin(f"delete offsets of {group}", lambda a: a.delete_group_offsets(group, [tp]))
        refused = [getattr(e, "__name__", str(e)) for e in answer.values() if e is not kerr.NoError]
        if len(answer) != 1 or refused:
            raise DrillError(f"delete offsets of {group}: the broker answered {refused or answer}")

    def member(self, group: str, topic: str, reset: str = "earliest") -> ActiveMember:
        return ActiveMember(self.cluster, group, topic, reset)

    # ---------------------------------------------------------------- cleanup

    def remove(self, group: str, topic: str) -> list[str]:
        """Delete the drill's group and topic; what could not be deleted (never raises)."""
        problems = []
        for what, call in (
            (f"group {group}", lambda a: a.delete_groups([group])),
            (f"topic {topic}", lambda a: a.delete_topics([topic])),
        ):
            try:
                self.with_admin(f"delete {what}", call, timeout=30)
            except DrillError as exc:
                if "GroupIdNotFound" not in str(exc) and "UnknownTopicOrPartition" not in str(exc):
                    problems.append(str(exc))
        return problems


_PRODUCER_KEYS = frozenset(KafkaProducer.DEFAULT_CONFIG)


class ActiveMember:
    """A real group member of ``topic`` (one partition), run by aiokafka on its own event loop thread."""

    def __init__(self, cluster: ClusterSettings, group: str, topic: str, reset: str) -> None:
        kwargs = consumer_kwargs(cluster, CLIENT_ID)
        for key in ("group_id", "isolation_level", "exclude_internal_topics", "auto_offset_reset"):
            kwargs.pop(key, None)
        self._kwargs = {**kwargs, "group_id": group, "auto_offset_reset": reset, "enable_auto_commit": False}
        self.group, self.topic = group, topic
        self._tp = AioPartition(topic, 0)
        self._consumer: AIOKafkaConsumer | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"drill-{group}", daemon=True)
        self._thread.start()

    def _call(self, what: str, work: Coroutine[Any, Any, T], timeout: float = 60.0) -> T:
        future = asyncio.run_coroutine_threadsafe(work, self._loop)
        try:
            return future.result(timeout)
        except TimeoutError as exc:
            future.cancel()
            raise DrillError(f"{what} of {self.group}: not done in {timeout:.0f} s") from exc
        except kerr.KafkaError as exc:
            raise DrillError(f"{what} of {self.group}: {exc!r}") from exc
        except Exception as exc:  # aiokafka's own errors
            if type(exc).__module__.startswith("aiokafka"):
                raise DrillError(f"{what} of {self.group}: {exc!r}") from exc
            raise

    def join(self, timeout: float = 60.0) -> None:
        """Subscribe and wait until the member is assigned the partition."""

        async def join() -> None:
            consumer = AIOKafkaConsumer(self.topic, **self._kwargs)
            self._consumer = consumer
            await consumer.start()
            while self._tp not in consumer.assignment():
                await consumer.getmany(timeout_ms=200)

        self._call("join", join(), timeout)

    def commit(self, offset: int) -> None:
        """Commit ``offset`` as the member (what an application's commit after a seek does)."""
        consumer = self._joined()
        self._call("commit", consumer.commit({self._tp: offset}))

    def commit_position(self, committed: int, timeout: float = 30.0) -> int:
        """Fetch until the member's position leaves ``committed`` (an out-of-range fetch answered and
        ``auto.offset.reset`` applied: the position starts at the committed offset and only a fetch shows
        it unfetchable), commit it, and return it."""
        consumer = self._joined()

        async def reset_and_commit() -> int:
            while (position := await consumer.position(self._tp)) == committed:
                await consumer.getmany(self._tp, timeout_ms=200)
            await consumer.commit({self._tp: position})
            return int(position)

        return self._call("reset and commit", reset_and_commit(), timeout)

    def stop(self) -> None:
        """Leave the group and stop the loop (a second call does nothing)."""
        if self._consumer is not None:
            consumer, self._consumer = self._consumer, None
            with contextlib.suppress(DrillError):
                self._call("leave", consumer.stop(), timeout=30)
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()

    def _joined(self) -> AIOKafkaConsumer:
        if self._consumer is None:
            raise DrillError(f"the member of {self.group} has not joined")
        return self._consumer
