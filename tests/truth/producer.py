"""The ground-truth harness's producer: kafka-python's KafkaProducer as an application uses it, recording an
:class:`~tests.truth.records.Acked` for every message the broker acknowledged.

Each value is the message's payload id (``f"{prefix}-{n}"``, utf-8), so a message is known by its payload
wherever it lands. The topic's id (Kafka's text form, as ``kafka-topics`` prints it) is looked up once per
call, before the first send (after the first acknowledgement if the topic did not exist yet): it names the
incarnation of the topic the messages went to.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from kafka import KafkaAdminClient, KafkaProducer

from collectors.codec.wire import topic_id_str
from tests.e2e.harness import retrying
from tests.truth.records import Acked, Journal

SEND_TIMEOUT = 30.0


class NotAcknowledged(RuntimeError):
    """A send the broker did not acknowledge (the harness stops: the oracle would be wrong)."""


def topic_id(bootstrap: str, topic: str) -> str | None:
    """``topic``'s id in Kafka's text form (URL-safe base64), None if the broker gives none. Asked again
    while a broker cannot be reached (a load writing through a broker's stop: the metadata request went
    to the stopped one)."""
    described = retrying(lambda: _describe(bootstrap, topic), 30)
    raw = described[0].get("topic_id") if described and not described[0].get("error_code") else None
    if not raw or uuid.UUID(str(raw)).int == 0:
        return None
    return topic_id_str(uuid.UUID(str(raw)).bytes)


def _describe(bootstrap: str, topic: str) -> list[dict[str, Any]]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        return list(admin.describe_topics([topic]))
    finally:
        admin.close()


def produce(
    bootstrap: str,
    topic: str,
    count: int,
    journal: Journal,
    *,
    partition: int | None = None,
    prefix: str,
    start: int = 0,
    acks: str | int = "all",
    extra: dict[str, Any] | None = None,
) -> list[Acked]:
    """Send ``count`` messages ``{prefix}-{start}`` .. ``{prefix}-{start + count - 1}`` to ``topic`` (to
    ``partition``, else where the default partitioner puts them), in order, and journal each acknowledgement
    (in send order); raise :class:`NotAcknowledged` on the first send that is not acknowledged."""
    if acks not in ("all", -1, 1, 0):
        raise ValueError(f"acks={acks!r}: 'all', 1 or 0")
    tid = topic_id(bootstrap, topic)  # None: not there yet (the first send may create it)
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=acks, **(extra or {}))
    acked: list[Acked] = []
    try:
        sent = [
            (f"{prefix}-{n}", producer.send(topic, value=f"{prefix}-{n}".encode(), partition=partition))
            for n in range(start, start + count)
        ]
        for payload, future in sent:
            try:
                meta = future.get(timeout=SEND_TIMEOUT)
            except Exception as exc:
                raise NotAcknowledged(f"{payload} to {topic} not acknowledged: {exc!r}") from exc
            if tid is None:
                tid = topic_id(bootstrap, topic)
            entry = Acked(topic, tid, meta.partition, meta.offset, payload, time.time())
            journal.write(entry)
            acked.append(entry)
    finally:
        producer.close(timeout=10)
    return acked
