"""The real tail consumer: one aiokafka ``AIOKafkaConsumer`` over every partition of ``__consumer_offsets``.

No consumer group (``group_id=None``, nothing committed), ``read_committed`` so aborted transactional
offset commits never surface (aiokafka skips them and the control records, moving the position past
them), explicit assignment, and large fetches: the tail is CPU bound on decoding, not on round trips.
A fetch from a stopped broker or a moved leader is retried by aiokafka itself (metadata refresh and
reconnect); whatever it does raise is translated into our error tree here.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import ssl
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, TypeVar

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.cluster import ClusterMetadata
from aiokafka.helpers import create_ssl_context
from aiokafka.protocol.metadata import MetadataRequest

from collectors.errors import KafkaTimeoutError, KafkaUnavailableError
from collectors.kafka.privates import consumer_client
from collectors.kafka.tail_errors import translate_aiokafka
from collectors.settings import ClusterSettings
from collectors.tail_model import TOPIC, RawRecord

T = TypeVar("T")

# What one fetch may bring per broker. Catching up on `__consumer_offsets`' history (a cold start) fills
# every fetch: at 32 / 8 MiB the three brokers' responses and their decoded records took glibc's heap to
# ~160 MB in use for the first seconds (the service's peak, 351-366 MB at 20k / 2k / 50k); at 4 / 1 MiB
# (Kafka's own per-partition default) ~100 MB and a 297 MB peak, the catch-up a few seconds longer.
FETCH_MAX_BYTES = 4 * 1024 * 1024
PARTITION_FETCH_MAX_BYTES = 1024 * 1024
# How long a broker holds a fetch of a caught-up tail when no record arrives (Kafka's own default). Not a
# delivery delay: with fetch.min.bytes 1 a record appended meanwhile answers the held fetch at once. It is
# the idle tail's request rate: every 0.2 s, 3 brokers took ~5 % of the service's CPU in fetch round trips.
# A busy cluster's rate is OffsetsTail's ``batch_interval_seconds`` (a fetch.min.bytes above 1 would also
# hold the fetch a lone commit after a quiet spell answers).
FETCH_MAX_WAIT_MS = 500
# How long positions() waits for a partition whose position is being reset (out of range, reconnect).
POSITION_WAIT_S = 0.05


def consumer_kwargs(settings: ClusterSettings, client_id: str = "offsetguard-tail") -> dict[str, Any]:
    """``AIOKafkaConsumer`` keyword arguments for one cluster (security included)."""
    kwargs: dict[str, Any] = {
        "bootstrap_servers": list(settings.bootstrap_servers),
        "client_id": client_id,
        "group_id": None,
        "enable_auto_commit": False,
        "isolation_level": "read_committed",
        # Only used when a stored position is out of range (truncation, a recreated cluster): re-read
        # rather than skip; duplicates are safer than silently lost commits.
        "auto_offset_reset": "earliest",
        "exclude_internal_topics": False,
        "fetch_max_bytes": FETCH_MAX_BYTES,
        "max_partition_fetch_bytes": PARTITION_FETCH_MAX_BYTES,
        "fetch_max_wait_ms": FETCH_MAX_WAIT_MS,
        "request_timeout_ms": settings.request_timeout_ms,
        "retry_backoff_ms": 200,
        "metadata_max_age_ms": 30_000,
        "security_protocol": settings.security_protocol,
    }
    if settings.sasl is not None:
        kwargs["sasl_mechanism"] = settings.sasl.mechanism
        kwargs["sasl_plain_username"] = settings.sasl.username
        kwargs["sasl_plain_password"] = settings.sasl.password.get_secret_value()
    if settings.security_protocol in ("SSL", "SASL_SSL"):
        kwargs["ssl_context"] = _ssl_context(settings)
    return kwargs


def _ssl_context(settings: ClusterSettings) -> ssl.SSLContext:
    tls = settings.tls
    if tls is None:
        return create_ssl_context()
    context = create_ssl_context(
        cafile=None if tls.cafile is None else str(tls.cafile),
        certfile=None if tls.certfile is None else str(tls.certfile),
        keyfile=None if tls.keyfile is None else str(tls.keyfile),
    )
    context.check_hostname = tls.check_hostname
    return context


class AiokafkaTailConsumer:
    """:class:`collectors.tail_model.TailConsumer` over aiokafka; a new client per :meth:`start`."""

    def __init__(self, settings: ClusterSettings, *, client_id: str = "offsetguard-tail") -> None:
        self.cluster = settings.name
        self._kwargs = consumer_kwargs(settings, client_id)
        self._consumer: Any = None
        self._tps: dict[int, Any] = {}

    async def _call(self, what: str, awaitable: Awaitable[T], partition: int | None = None) -> T:
        try:
            return await awaitable
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise translate_aiokafka(exc, cluster=self.cluster, partition=partition, what=what) from exc

    def _require(self) -> Any:
        if self._consumer is None:
            raise KafkaUnavailableError("tail consumer is not started", cluster=self.cluster, topic=TOPIC)
        return self._consumer

    def _tp(self, partition: int) -> Any:
        tp = self._tps.get(partition)
        if tp is None:
            tp = self._tps[partition] = TopicPartition(TOPIC, partition)
        return tp

    async def start(self) -> None:
        if self._consumer is not None:
            await self.stop()
        consumer = AIOKafkaConsumer(**self._kwargs)
        try:
            await self._call("bootstrap", consumer.start())
        except BaseException:
            await asyncio.shield(_quiet_stop(consumer))
            raise
        self._consumer = consumer

    async def partition_count(self, topic: str = TOPIC) -> int | None:
        """Partitions of ``topic`` (``__consumer_offsets``), None while it does not exist."""
        client = consumer_client(self._require())
        # AIOKafkaConsumer.topics() drops partition counts and partitions_for_topic() only knows topics
        # already assigned, so ask the consumer's own client, for this topic only: the whole cluster's
        # metadata (20,000 partitions decoded in pure Python on the event loop) cost a start ~0.5 s.
        # Never auto-created by asking: a missing topic is waited for.
        nodes = [b.nodeId for b in client.cluster.brokers()]
        random.shuffle(nodes)
        request = MetadataRequest([topic], allow_auto_topic_creation=False)
        cluster_md = ClusterMetadata()
        # The same walk as aiokafka's private AIOKafkaClient._metadata_update (each known broker in turn,
        # the first to answer wins), written here because that one always allows auto-creation.
        for n, node in enumerate(nodes):
            try:
                cluster_md.update_metadata(await self._call("metadata", client.send(node, request)))
                break
            except (KafkaUnavailableError, KafkaTimeoutError):
                if n == len(nodes) - 1:
                    raise
        else:  # no broker known yet
            cluster_md = await self._call("metadata", client.fetch_all_metadata())
        partitions = cluster_md.partitions_for_topic(topic)
        return len(partitions) if partitions else None

    def assign(self, partitions: Sequence[int]) -> None:
        try:
            self._require().assign([self._tp(p) for p in partitions])
        except Exception as exc:
            raise translate_aiokafka(exc, cluster=self.cluster, what="assign") from exc

    def seek(self, partition: int, offset: int) -> None:
        try:
            self._require().seek(self._tp(partition), offset)
        except Exception as exc:
            raise translate_aiokafka(exc, cluster=self.cluster, partition=partition, what="seek") from exc

    async def seek_to_beginning(self, partitions: Sequence[int]) -> None:
        tps = [self._tp(p) for p in partitions]
        await self._call("seek to beginning", self._require().seek_to_beginning(*tps))

    async def seek_to_end(self, partitions: Sequence[int]) -> None:
        tps = [self._tp(p) for p in partitions]
        await self._call("seek to end", self._require().seek_to_end(*tps))

    async def end_offsets(self, partitions: Sequence[int]) -> dict[int, int]:
        consumer = self._require()
        tps = [self._tp(p) for p in partitions]
        # The consumer's request_timeout bounds it, but the call "may block indefinitely" when a
        # partition has no leader: bound it ourselves too.
        timeout = self._kwargs["request_timeout_ms"] / 1000
        ends = await self._call("list offsets", asyncio.wait_for(consumer.end_offsets(tps), timeout))
        return {tp.partition: offset for tp, offset in ends.items()}

    async def fetch(self, timeout_ms: int, max_records: int) -> Mapping[int, Sequence[RawRecord]]:
        batch = await self._call(
            "fetch", self._require().getmany(timeout_ms=timeout_ms, max_records=max_records)
        )
        return {tp.partition: records for tp, records in batch.items()}

    async def positions(self, partitions: Sequence[int]) -> dict[int, int]:
        consumer = self._require()

        async def one(partition: int) -> int | None:
            try:
                offset: int = await asyncio.wait_for(consumer.position(self._tp(partition)), POSITION_WAIT_S)
            except Exception:  # TimeoutError included
                return None  # being reset or not assigned: the caller keeps what it knew
            return offset

        found = await asyncio.gather(*(one(p) for p in partitions))
        return {p: offset for p, offset in zip(partitions, found, strict=True) if offset is not None}

    async def stop(self) -> None:
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            await _quiet_stop(consumer)


async def _quiet_stop(consumer: Any) -> None:
    with contextlib.suppress(Exception):  # closing a half-started client may fail; nothing to release
        await consumer.stop()
