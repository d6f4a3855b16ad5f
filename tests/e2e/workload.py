"""Background threads for the e2e scenarios: steady produce traffic, and a group member that reads and
commits what it read until it leaves."""

from __future__ import annotations

import threading
import uuid
from contextlib import suppress

import kafka.errors as kerr
from kafka import KafkaProducer

from service.sandbox.cluster import SandboxCluster
from tests.e2e.consumers import group_consumer, join

CLOSE_TIMEOUT_S = 30


class Traffic(threading.Thread):
    """About 20 messages a second over every partition; send errors during restarts are counted."""

    def __init__(self, kafka: SandboxCluster, topic: str) -> None:
        super().__init__(daemon=True, name="e2e-traffic")
        # A send still pending when an outage ends fails within delivery_timeout_ms, so that close() can
        # wait it out: kafka-python's close() flushes first and, when the flush times out, raises without
        # closing (the producer's __del__ then raises again, an unraisable-exception warning).
        self.producer = KafkaProducer(
            bootstrap_servers=kafka.bootstrap_servers,
            acks="all",
            retries=100,
            request_timeout_ms=10_000,
            delivery_timeout_ms=CLOSE_TIMEOUT_S * 1000 - 10_000,
        )
        self.topic, self.sent, self.errors = topic, 0, 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.wait(0.05):
            try:
                self.producer.send(self.topic, b"m%d" % self.sent)
                self.sent += 1
            except kerr.KafkaError:
                self.errors += 1
        self.producer.close(timeout=CLOSE_TIMEOUT_S)  # every pending send has failed or landed by then

    def halt(self) -> None:
        self._halt.set()
        self.join(CLOSE_TIMEOUT_S + 10)


class Member(threading.Thread):
    """One group member: polls and commits what it read, until :meth:`leave` (a clean LeaveGroup)."""

    def __init__(self, kafka: SandboxCluster, group: str, topic: str) -> None:
        super().__init__(daemon=True, name=f"e2e-member-{uuid.uuid4().hex[:4]}")
        self.kafka, self.group, self.topic = kafka, group, topic
        self.read = 0
        self.error: BaseException | None = None
        self._halt = threading.Event()

    def run(self) -> None:
        consumer = group_consumer(self.kafka, self.group)
        try:
            join(consumer, self.topic)
            while not self._halt.is_set():
                batches = consumer.poll(timeout_ms=200)
                n = sum(len(b) for b in batches.values())
                if n:
                    self.read += n
                    # a rebalance or a coordinator move may refuse it: the next commit covers it
                    with suppress(kerr.KafkaError):
                        consumer.commit()
        except BaseException as exc:
            self.error = exc
        finally:
            consumer.close(autocommit=False)

    def leave(self) -> None:
        self._halt.set()
        self.join(60)
