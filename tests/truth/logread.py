"""What the log holds now: every payload of some topics, read back from their log start."""

from __future__ import annotations

import time
from collections.abc import Iterable

from kafka import KafkaConsumer, TopicPartition

from sandbox.cluster import SandboxCluster


class ReadBackTimeout(RuntimeError):
    """A topic could not be read back to its log end in time."""


def held_payloads(kafka: SandboxCluster, topics: Iterable[str], timeout: float = 60.0) -> list[str]:
    """Every payload ``topics`` hold now (a topic that does not exist holds none). Raises
    :class:`ReadBackTimeout` or a Kafka error when the log cannot be read back."""
    held: list[str] = []
    config = kafka.client_config()
    consumer = KafkaConsumer(**config, enable_auto_commit=False, allow_auto_create_topics=False)
    try:
        for topic in sorted(topics):
            parts = consumer.partitions_for_topic(topic) or set()
            tps = [TopicPartition(topic, p) for p in sorted(parts)]
            if not tps:
                continue
            consumer.assign(tps)
            consumer.seek_to_beginning(*tps)
            ends = consumer.end_offsets(tps)
            deadline = time.monotonic() + timeout
            while any(consumer.position(tp) < ends[tp] for tp in tps):
                if time.monotonic() > deadline:
                    raise ReadBackTimeout(f"reading back {topic} timed out after {timeout:.0f} s")
                for batch in consumer.poll(timeout_ms=200).values():
                    held.extend(r.value.decode() for r in batch if r.value is not None)
    finally:
        consumer.close()
    return held
