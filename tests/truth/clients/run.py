"""One Python consumer of the ground-truth harness, in a process of its own (started by
:func:`tests.truth.clients.start_member`): ``python -c BOOT ROOT SPEC_JSON``.

Each library runs as an application would run it, with the library's own defaults for committing
(auto commit on, its own interval and its own commit on close, if it does one) and for
``auto.offset.reset``; only the session timeout is shortened (a killed member leaves its group within
seconds). A record counts as processed once its :class:`~tests.truth.records.Read` is written and flushed;
the library commits whenever it does. SIGTERM is the application's clean shutdown: the batch in hand is
finished, then the library's own close (kafka-python ``close()``, aiokafka ``stop()``, librdkafka
``close()``). SIGKILL is a crash.

Besides the journal the member writes lifecycle markers to a file of their own (``<journal>.events``, so
the journal holds only reads): ``started``, ``assigned`` / ``revoked`` (partitions as ``[topic,
partition]``), ``error``, ``closing``, ``closed``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, Any

from tests.truth.records import Journal, Read

SESSION_TIMEOUT_MS = 6000  # the broker's default group.min.session.timeout.ms
HEARTBEAT_INTERVAL_MS = 2000
POLL_SECONDS = 0.2

# The child's bootstrap: put the repository on sys.path (argv[1]) and run main(argv[2:]).
BOOT = (
    "import sys\n"
    "sys.path.insert(0, sys.argv[1])\n"
    "from tests.truth.clients.run import main\n"
    "raise SystemExit(main(sys.argv[2:]))\n"
)


@dataclass(frozen=True)
class ChildSpec:
    client: str
    bootstrap: str
    group: str
    topics: list[str]
    out: str
    events: str
    reset: str = "earliest"
    mode: str = "subscribe"
    partitions: list[tuple[str, int]] | None = None  # assign mode: the partitions (the parent resolves them)
    allow_auto_create: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ChildSpec:
        raw = json.loads(text)
        parts = raw.pop("partitions")
        return cls(**raw, partitions=None if parts is None else [(str(t), int(p)) for t, p in parts])


class Events:
    """The member's lifecycle markers, one JSON object a line, flushed."""

    def __init__(self, path: Path) -> None:
        self._file: IO[str] = path.open("a", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, event: str, **fields: Any) -> None:
        line = json.dumps({"event": event, "at": time.time(), **fields}, separators=(",", ":"))
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def partitions(self, event: str, tps: Iterable[Any]) -> None:
        """``tps``: anything with ``topic`` and ``partition`` (each library's TopicPartition)."""
        self.write(event, partitions=sorted([tp.topic, tp.partition] for tp in tps))

    def close(self) -> None:
        self._file.close()


class Stop:
    """Set by SIGTERM (the application's clean shutdown); the poll loop checks it between batches."""

    def __init__(self) -> None:
        self.requested = False

    def handler(self, signum: int, frame: FrameType | None) -> None:
        self.requested = True


def _payload(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _read(spec: ChildSpec, topic: str, partition: int, offset: int, value: bytes | str | None) -> Read:
    return Read(spec.group, topic, partition, offset, _payload(value), spec.client, time.time())


# ---------------------------------------------------------------------------------------- kafka-python
def run_kafka_python(spec: ChildSpec, journal: Journal, events: Events, stop: Stop) -> None:
    from kafka import TopicPartition
    from kafka.consumer.subscription_state import ConsumerRebalanceListener

    from tests.support.group_consumer import GroupConsumer

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: Any) -> None:
            events.partitions("revoked", revoked)

        def on_partitions_assigned(self, assigned: Any) -> None:
            events.partitions("assigned", assigned)

    # kafka-python 3.0.12 can leave a fresh member REBALANCING for good (a client bug, not an offset
    # incident: tests/support/group_consumer.py); its subclass there asks for the rejoin the bug drops.
    consumer = GroupConsumer(
        bootstrap_servers=spec.bootstrap,
        group_id=spec.group,
        client_id=f"truth-{spec.client}",
        auto_offset_reset=spec.reset,
        allow_auto_create_topics=spec.allow_auto_create,
        session_timeout_ms=SESSION_TIMEOUT_MS,
        heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
        **spec.extra,
    )
    if spec.mode == "subscribe":
        consumer.subscribe(spec.topics, listener=Listener())
    else:
        tps = [TopicPartition(t, p) for t, p in spec.partitions or ()]
        consumer.assign(tps)
        events.partitions("assigned", tps)
    while not stop.requested:
        for records in consumer.poll(timeout_ms=int(POLL_SECONDS * 1000)).values():
            for r in records:
                journal.write(_read(spec, r.topic, r.partition, r.offset, r.value))
    events.write("closing")
    consumer.close()  # autocommit=True: kafka-python commits the consumed positions, then leaves the group


# ---------------------------------------------------------------------------------------- aiokafka
def run_aiokafka(spec: ChildSpec, journal: Journal, events: Events, stop: Stop) -> None:
    asyncio.run(_aiokafka(spec, journal, events))


async def _aiokafka(spec: ChildSpec, journal: Journal, events: Events) -> None:
    from aiokafka import AIOKafkaConsumer, TopicPartition
    from aiokafka.abc import ConsumerRebalanceListener

    stopping = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopping.set)

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: Any) -> None:
            events.partitions("revoked", revoked)

        def on_partitions_assigned(self, assigned: Any) -> None:
            events.partitions("assigned", assigned)

    # aiokafka has no allow.auto.create.topics: its metadata requests always allow creation.
    consumer = AIOKafkaConsumer(
        bootstrap_servers=spec.bootstrap,
        group_id=spec.group,
        client_id=f"truth-{spec.client}",
        auto_offset_reset=spec.reset,
        session_timeout_ms=SESSION_TIMEOUT_MS,
        heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
        **spec.extra,
    )
    await consumer.start()
    try:
        if spec.mode == "subscribe":
            consumer.subscribe(spec.topics, listener=Listener())
        else:
            tps = [TopicPartition(t, p) for t, p in spec.partitions or ()]
            consumer.assign(tps)
            events.partitions("assigned", tps)
        while not stopping.is_set():
            batches = await consumer.getmany(timeout_ms=int(POLL_SECONDS * 1000))
            for records in batches.values():
                for r in records:
                    journal.write(_read(spec, r.topic, r.partition, r.offset, r.value))
    finally:
        events.write("closing")
        await consumer.stop()  # with auto commit: the last commit of the consumed positions, leave group


# ---------------------------------------------------------------------------------------- librdkafka
def run_librdkafka(spec: ChildSpec, journal: Journal, events: Events, stop: Stop) -> None:
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": spec.bootstrap,
            "group.id": spec.group,
            "client.id": f"truth-{spec.client}",
            "auto.offset.reset": spec.reset,
            "allow.auto.create.topics": spec.allow_auto_create,
            "session.timeout.ms": SESSION_TIMEOUT_MS,
            "heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS,
            **spec.extra,
        }
    )
    if spec.mode == "subscribe":
        consumer.subscribe(
            spec.topics,
            on_assign=lambda _c, tps: events.partitions("assigned", tps),
            on_revoke=lambda _c, tps: events.partitions("revoked", tps),
            on_lost=lambda _c, tps: events.partitions("lost", tps),
        )
    else:
        tps = [TopicPartition(t, p) for t, p in spec.partitions or ()]
        consumer.assign(tps)  # offsets unset: the group's committed offset, else auto.offset.reset
        events.partitions("assigned", tps)
    while not stop.requested:
        msg = consumer.poll(POLL_SECONDS)
        if msg is None:
            continue
        error = msg.error()
        if error is not None:
            if error.code() != KafkaError._PARTITION_EOF:
                events.write("error", error=str(error))
            continue
        topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
        assert topic is not None and partition is not None and offset is not None
        journal.write(_read(spec, topic, partition, offset, msg.value()))
    events.write("closing")
    consumer.close()  # librdkafka commits the stored offsets (auto commit on) and leaves the group


RUNNERS = {"kafka-python": run_kafka_python, "aiokafka": run_aiokafka, "librdkafka": run_librdkafka}


def main(argv: list[str]) -> int:
    spec = ChildSpec.from_json(argv[0])
    stop = Stop()
    signal.signal(signal.SIGTERM, stop.handler)
    journal = Journal(Path(spec.out))
    events = Events(Path(spec.events))
    events.write("started", pid=os.getpid())
    try:
        RUNNERS[spec.client](spec, journal, events, stop)
    except BaseException as exc:
        events.write("error", error=repr(exc), fatal=True)
        raise
    events.write("closed")
    journal.close()
    events.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
