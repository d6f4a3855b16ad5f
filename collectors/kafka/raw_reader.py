"""The real :class:`collectors.raw_reader.RawRecordReader`, over kafka-python 3.0's connection manager.

A plain ``KafkaConsumer`` hides what a snapshot needs as evidence: it drops control batches and never
says which producer or transaction a record belongs to. So this reader sends Fetch requests itself
(v4–12, read_uncommitted, no fetch session) to the partition leader through the admin client's connection
manager, as :mod:`collectors.kafka.seam` does for its requests, and parses the record batches with
kafka-python's ``MemoryRecords``. A moved leader is followed (fresh metadata, a few retries); everything
leaving this module is a :class:`collectors.errors.KafkaError`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import kafka.errors as kerr
from kafka.admin import KafkaAdminClient
from kafka.protocol.consumer import FetchRequest
from kafka.record import MemoryRecords

from collectors.errors import KafkaError, KafkaResponseError, KafkaUnavailableError
from collectors.kafka import requests as rq
from collectors.kafka.errors import response_error, translate
from collectors.kafka.privates import admin_manager
from collectors.kafka.seam import client_kwargs
from collectors.model import TopicPartition
from collectors.raw_reader import NO_PRODUCER, TOPIC, PartitionRange, RawFetch, RawRecord
from collectors.settings import ClusterSettings

T = TypeVar("T")

_FETCH_MAX_WAIT_MS = 100  # we only ask below the high watermark: data is there, do not linger
_LEADER_RETRIES = 3
_FTopic = FetchRequest.FetchTopic
_FPartition = _FTopic.FetchPartition


class KafkaRawReader:
    """:class:`collectors.raw_reader.RawRecordReader` over one lazily created ``KafkaAdminClient``."""

    def __init__(
        self,
        settings: ClusterSettings,
        *,
        client_id: str = "offsetguard-snapshot",
        admin_factory: Callable[..., Any] = KafkaAdminClient,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.cluster = settings.name
        self._sleep = sleep
        self._settings = settings
        self._client_id = client_id
        self._admin_factory = admin_factory
        self._admin: Any = None
        self._leaders: dict[int, int | None] = {}
        self._lock = threading.Lock()
        self._closed = False

    # ---------------------------------------------------------------- plumbing

    def _manager(self) -> Any:
        with self._lock:
            if self._closed:
                raise KafkaError("the raw reader is closed", cluster=self.cluster, topic=TOPIC)
            if self._admin is None:
                try:
                    self._admin = self._admin_factory(**client_kwargs(self._settings, self._client_id))
                except Exception as exc:
                    raise translate(exc, cluster=self.cluster, what="bootstrap") from exc
            return admin_manager(self._admin)

    def _run(self, work: Callable[[Any], Any], what: str, partition: int | None = None) -> Any:
        manager = self._manager()
        try:
            return manager.run(work, manager)
        except Exception as exc:
            raise translate(exc, cluster=self.cluster, topic=TOPIC, partition=partition, what=what) from exc

    def _refresh(self) -> int:
        snapshot = self._run(lambda m: rq.metadata(m, self.cluster), "Metadata")
        topic = next((t for t in snapshot.topics if t.name == TOPIC), None)
        if topic is None or not topic.partitions:
            raise KafkaUnavailableError(f"{TOPIC} does not exist yet", cluster=self.cluster, topic=TOPIC)
        self._leaders = {p.partition: p.leader for p in topic.partitions}
        return len(topic.partitions)

    def _leader(self, partition: int) -> int:
        if self._leaders.get(partition) is None:
            self._refresh()
        leader = self._leaders.get(partition)
        if leader is None:
            raise KafkaUnavailableError(
                "partition has no leader", cluster=self.cluster, topic=TOPIC, partition=partition
            )
        return leader

    def _with_leader(self, partition: int, call: Callable[[int], T]) -> T:
        """``call(leader)``, re-reading metadata and retrying when the leader moved or is unreachable."""
        for attempt in range(_LEADER_RETRIES + 1):
            try:
                return call(self._leader(partition))
            except (KafkaResponseError, KafkaUnavailableError) as exc:
                code = getattr(exc, "error_code", None)
                moved = code is None or kerr.for_code(code).retriable
                if not moved or attempt == _LEADER_RETRIES:
                    raise
                self._leaders.pop(partition, None)
                self._sleep(0.2 * (attempt + 1))
        raise AssertionError("unreachable")  # pragma: no cover

    # ---------------------------------------------------------------- RawRecordReader

    def partition_count(self) -> int:
        """See :meth:`collectors.raw_reader.RawRecordReader.partition_count`."""
        return self._refresh()

    def partition_range(self, partition: int) -> PartitionRange:
        """See :meth:`collectors.raw_reader.RawRecordReader.partition_range`."""
        tp = TopicPartition(TOPIC, partition)
        timeout = self._settings.request_timeout_ms

        def ask(leader: int) -> PartitionRange:
            ranges, errors = self._run(
                lambda m: rq.list_offsets(m, self.cluster, leader, [tp], timeout), "ListOffsets", partition
            )
            if tp in errors:
                raise errors[tp]
            return PartitionRange(ranges[tp].log_start, ranges[tp].log_end)

        return self._with_leader(partition, ask)

    def fetch(self, partition: int, offset: int, max_bytes: int) -> RawFetch:
        """See :meth:`collectors.raw_reader.RawRecordReader.fetch`."""

        def ask(leader: int) -> RawFetch:
            request = FetchRequest(
                replica_id=-1,
                max_wait_ms=_FETCH_MAX_WAIT_MS,
                min_bytes=1,
                max_bytes=max_bytes,
                isolation_level=0,  # read_uncommitted: aborted and open transactions are evidence too
                session_id=0,
                session_epoch=-1,  # no incremental fetch session
                topics=[
                    _FTopic(
                        topic=TOPIC,
                        partitions=[
                            _FPartition(
                                partition=partition,
                                current_leader_epoch=-1,
                                fetch_offset=offset,
                                log_start_offset=-1,
                                partition_max_bytes=max_bytes,
                            )
                        ],
                    )
                ],
                forgotten_topics_data=[],
                rack_id="",
                min_version=4,
                max_version=12,  # v13+ names topics by id only
            )
            response = self._run(lambda m: rq.send(m, request, leader), f"Fetch from {leader}", partition)
            return self._parse(response, partition, offset)

        return self._with_leader(partition, ask)

    def _parse(self, response: Any, partition: int, offset: int) -> RawFetch:
        data = next(
            (p for t in response.responses for p in t.partitions if p.partition_index == partition), None
        )
        if data is None:
            raise KafkaUnavailableError(
                "leader did not answer for the partition",
                cluster=self.cluster,
                topic=TOPIC,
                partition=partition,
            )
        if data.error_code:
            raise response_error(data.error_code, cluster=self.cluster, topic=TOPIC, partition=partition)
        try:
            return parse_records(partition, offset, data.records)
        except Exception as exc:
            raise translate(
                exc, cluster=self.cluster, topic=TOPIC, partition=partition, what="parse fetched records"
            ) from exc

    def close(self) -> None:
        """See :meth:`collectors.raw_reader.RawRecordReader.close`."""
        with self._lock:
            admin, self._admin, self._closed = self._admin, None, True
        if admin is not None:
            try:
                admin.close()
            except Exception as exc:
                raise translate(exc, cluster=self.cluster, what="close") from exc


def parse_records(partition: int, offset: int, raw: Any) -> RawFetch:
    """The records at or after ``offset`` in fetched bytes; a trailing partial batch is left for later."""
    records: list[RawRecord] = []
    next_offset = offset
    if not raw:
        return RawFetch((), next_offset)
    for batch in MemoryRecords(bytes(raw)):
        producer_id = getattr(batch, "producer_id", None)
        pid = NO_PRODUCER if producer_id is None else int(producer_id)
        epoch = int(getattr(batch, "producer_epoch", -1))
        transactional = bool(getattr(batch, "is_transactional", False))
        control = bool(getattr(batch, "is_control_batch", False))
        last = offset - 1
        for record in batch:
            last = record.offset
            if record.offset < offset:
                continue  # the broker returns whole batches: skip what precedes the asked offset
            records.append(
                RawRecord(
                    partition,
                    record.offset,
                    record.timestamp,
                    record.key,
                    record.value,
                    producer_id=pid,
                    producer_epoch=epoch,
                    transactional=transactional,
                    control=control,
                )
            )
        # v2 batches know their end even when compaction emptied them; legacy ones end at their last record
        next_offset = max(next_offset, getattr(batch, "next_offset", last + 1))
    return RawFetch(tuple(records), next_offset)
