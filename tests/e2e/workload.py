"""Background threads for the e2e scenarios: steady produce traffic, and a group member that reads and
commits what it read until it leaves."""

from __future__ import annotations

import threading
import uuid
from contextlib import suppress

import kafka.errors as kerr
from confluent_kafka import KafkaException, Producer
from kafka import KafkaConsumer

from sandbox.cluster import SandboxCluster
from tests.e2e.consumers import group_consumer, join


class Traffic(threading.Thread):
    """About 20 messages a second over every partition; send errors during restarts are counted.

    librdkafka's producer: every message is settled (written, or failed) within ``message.timeout.ms``, so
    the flush at :meth:`halt` leaves nothing behind. kafka-python 3.0.12's producer, sending through a
    whole-cluster outage, kept a record unsettled for good: its close timed out flushing, and its finalizer
    tried again (and failed again) in whichever later test collected it."""

    SETTLE_S = 15

    def __init__(self, kafka: SandboxCluster, topic: str) -> None:
        super().__init__(daemon=True, name="e2e-traffic")
        self.producer = Producer(
            {
                "bootstrap.servers": kafka.bootstrap_servers,
                "acks": "all",
                "message.timeout.ms": self.SETTLE_S * 1000,
                "log_level": 3,  # errors only: brokers going away are the scenario, not news
            }
        )
        self.topic, self.sent, self.errors = topic, 0, 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.wait(0.05):
            try:
                self.producer.produce(self.topic, b"m%d" % self.sent)
                self.sent += 1
            except (BufferError, KafkaException):
                self.errors += 1
            self.producer.poll(0)  # delivery reports served (the queue freed)
        self.producer.flush(self.SETTLE_S + 5)

    def halt(self) -> None:
        self._halt.set()
        self.join(self.SETTLE_S + 15)


class Member(threading.Thread):
    """One group member: polls and commits what it read, until :meth:`leave` (a clean LeaveGroup).

    A retriable error out of ``poll()`` is counted in :attr:`retried` and the member polls on, as an
    application does: kafka-python re-raises there the error its heartbeat loop died of (the coordinator
    unreachable while brokers restart) and starts a new loop on the next ``poll()``. Any other error ends
    the member and is kept in :attr:`error`."""

    def __init__(self, kafka: SandboxCluster, group: str, topic: str) -> None:
        super().__init__(daemon=True, name=f"e2e-member-{uuid.uuid4().hex[:4]}")
        self.kafka, self.group, self.topic = kafka, group, topic
        self.read = 0
        self.retried: list[kerr.KafkaError] = []
        self.error: BaseException | None = None
        self._halt = threading.Event()

    def run(self) -> None:
        consumer = self.consumer()
        try:
            join(consumer, self.topic)
            while not self._halt.is_set():
                try:
                    n = sum(len(b) for b in consumer.poll(timeout_ms=200).values())
                except kerr.KafkaError as exc:
                    if not exc.retriable:
                        raise
                    self.retried.append(exc)
                    continue
                self.read += n
                self.after_poll(consumer, n)
        except BaseException as exc:
            self.error = exc
        finally:
            consumer.close(autocommit=False)

    def consumer(self) -> KafkaConsumer:
        return group_consumer(self.kafka, self.group)

    def after_poll(self, consumer: KafkaConsumer, n: int) -> None:
        """Commit what it read; a rebalance or a coordinator move may refuse it: the next commit covers it."""
        if n:
            with suppress(kerr.KafkaError):
                consumer.commit()

    def leave(self) -> None:
        self._halt.set()
        self.join(60)
