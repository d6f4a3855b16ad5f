"""The live tail of ``__consumer_offsets``: every commit, tombstone and group record, in order, as events.

:class:`OffsetsTail` reads every partition of ``__consumer_offsets`` through a
:class:`collectors.tail_model.TailConsumer` (no group of its own, read_committed, explicit assignment),
decodes each record with :func:`collectors.codec.decode` and hands batches of
:class:`collectors.tail_model.TailEvent` to one :class:`collectors.tail_model.TailSink`.

Delivery is at least once: a position is saved only after the sink returned for the events before it
(every ``checkpoint_seconds`` and at stop), and a restart resumes from the saved positions. Fetch
errors, a broker down or a moved leader are logged and retried with backoff; a record that does not
decode is counted and skipped, and so is, its value never decoded, a record of a group, topic or pair out
of the cluster's scope (:class:`collectors.scope.Scope`). ``caught_up`` turns true once every partition
reached the end offset seen at start, and stays true. Caught up, while records keep coming (batches short
of ``max_batch_records``), a fetch follows the last one no sooner than ``batch_interval_seconds``: each
then brings everything appended meanwhile; a record after a quiet spell answers the fetch held for it at
once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from collectors.codec import UnknownRecord, decode
from collectors.codec.keys import key_names
from collectors.errors import KafkaAuthError, KafkaError, OffsetguardError, StoreWriteError
from collectors.scope import EVERYTHING, Scope
from collectors.tail_model import (
    PositionStore,
    RawRecord,
    TailConsumer,
    TailEvent,
    TailFigures,
    TailSink,
)
from collectors.tail_progress import Backoff, TailProgress

log = logging.getLogger(__name__)

TOPIC_POLL_S = 2.0  # while __consumer_offsets does not exist yet
LOGGED_DECODE_ERRORS = 10  # log the first ones, then every 1000th


class OffsetsTail:
    """Tails one cluster's ``__consumer_offsets``; :meth:`start` in a running loop, :meth:`stop` to end."""

    def __init__(
        self,
        cluster: str,
        consumer: TailConsumer,
        sink: TailSink,
        *,
        store: PositionStore | None = None,
        start_from: Literal["earliest", "latest"] = "earliest",
        checkpoint_seconds: float = 1.0,
        max_batch_records: int = 10_000,
        end_offsets_seconds: float = 5.0,
        fetch_timeout_ms: int = 500,
        batch_interval_seconds: float = 0.0,
        topic_poll_seconds: float = TOPIC_POLL_S,
        backoff: Backoff | None = None,
        clock: Callable[[], float] = time.time,
        scope: Scope = EVERYTHING,
    ) -> None:
        self.cluster = cluster
        self.scope = scope
        self.sink = sink
        self._consumer = consumer
        self._store = store
        self._start_from = start_from
        self._checkpoint_s = checkpoint_seconds
        self._max_batch = max_batch_records
        self._ends_s = end_offsets_seconds
        self._fetch_timeout_ms = fetch_timeout_ms
        self._interval_s = batch_interval_seconds
        self._topic_poll_s = topic_poll_seconds
        self._backoff = backoff or Backoff()
        self._clock = clock
        self.progress = TailProgress()
        self.state = "starting"
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._last_checkpoint = time.monotonic()

    # ------------------------------------------------------------------ public
    @property
    def caught_up(self) -> bool:
        return self.progress.caught_up

    def live(self) -> bool:
        """Caught up and reading: every commit reaches the sink as it is made. Detection trusts the tail
        for every commit, and the committed collector may answer from its view, only while this holds."""
        return self.progress.caught_up and self.state == "running"

    def figures(self) -> TailFigures:
        return self.progress.figures(self.cluster, self.state, time.monotonic())

    @property
    def interruptions(self) -> int:
        """Failed fetches and sessions, and records skipped undecodable, so far: after each, the sink may
        not have had every record (a failed session resumes where delivery stopped, a skipped one is lost)."""
        return self.progress.fetch_errors + self.progress.decode_errors

    @property
    def delivered(self) -> Mapping[int, int]:
        """Per partition: the sink has every event before this offset."""
        return self.progress.delivered

    async def end_offsets(self) -> dict[int, int]:
        """Every partition's end offset now (read_committed: the last stable offset, as far as the tail can
        read); a :class:`KafkaError` when Kafka cannot tell or the tail is not connected."""
        return await self._consumer.end_offsets(self.progress.partitions)

    def start(self) -> None:
        """Run the tail as a background task of the running loop."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self.run(), name=f"tail:{self.cluster}")

    async def stop(self, timeout: float = 10.0) -> None:
        """Finish the batch in hand, close the consumer, save the delivered positions."""
        self._stopping.set()
        task, self._task = self._task, None
        if task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout)
            except TimeoutError:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            except asyncio.CancelledError:
                if _cancelling():
                    raise
                # the tail's task ended cancelled from inside: its delivered positions are saved below
        await self._checkpoint()
        self.state = "stopped"

    async def run(self) -> None:
        """Sessions (connect, seek, fetch) until :meth:`stop`; a failed session is retried, never fatal."""
        while not self._stopping.is_set():
            try:
                await self._session()
            except OffsetguardError as exc:
                self._failed(exc, "tail session failed")
            except asyncio.CancelledError as exc:
                if _cancelling():
                    raise
                self._client_cancelled(exc, "session (retried)")
            except Exception as exc:  # a bug (or the sink) must not end the tail for good
                log.exception("tail %s: session crashed", self.cluster, extra={"cluster": self.cluster})
                self.progress.failed(exc)
            finally:
                await self._stop_consumer()
            if not self._stopping.is_set():
                self.state = "backing_off"
                await self._wait(self._backoff.next())

    async def _stop_consumer(self) -> None:
        try:
            await self._consumer.stop()
        except asyncio.CancelledError as exc:
            if _cancelling():
                raise
            self._client_cancelled(exc, "client close")

    def _client_cancelled(self, exc: asyncio.CancelledError, what: str) -> None:
        """The Kafka client let a cancellation of its own out (aiokafka does when a broker's connection
        closes under a fetch): not ours, so the session is retried, never the tail ended."""
        log.warning(
            "tail %s: %s cancelled inside the Kafka client (a broker connection closed?)",
            self.cluster,
            what,
            extra={"cluster": self.cluster},
        )
        self.progress.failed(exc)

    # ------------------------------------------------------------------ one session
    async def _session(self) -> None:
        consumer = self._consumer
        self.state = "starting"
        await consumer.start()
        count = await consumer.partition_count()
        while count is None:
            self.state = "waiting_for_topic"
            self.progress.nothing_to_catch_up()
            if await self._wait(self._topic_poll_s):
                return
            count = await consumer.partition_count()
        partitions = list(range(count))
        self.progress.set_partitions(partitions)
        consumer.assign(partitions)
        await self._seek(partitions)
        if self.progress.targets is None:
            self.progress.set_targets(await consumer.end_offsets(partitions))
        self.progress.deliver(await consumer.positions(partitions))
        self.state = "running"
        self._backoff.reset()
        ends = asyncio.create_task(self._refresh_ends(partitions), name=f"tail-ends:{self.cluster}")
        try:
            await self._fetch_loop(partitions)
        finally:
            ends.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ends

    async def _seek(self, partitions: Sequence[int]) -> None:
        """Resume where delivery stopped: this process's positions, else the store's, else ``start_from``."""
        stored: dict[int, int] = {}
        if self._store is not None:
            rows = await asyncio.to_thread(self._store.tail_positions, self.cluster)
            stored = {row.partition: row.next_offset for row in rows}
            self.progress.set_stored(stored)
        known = {**stored, **self.progress.delivered}
        fresh = []
        for partition in partitions:
            if partition in known:
                self._consumer.seek(partition, known[partition])
            else:
                fresh.append(partition)
        if fresh and self._start_from == "latest":
            await self._consumer.seek_to_end(fresh)
        elif fresh:
            await self._consumer.seek_to_beginning(fresh)

    async def _fetch_loop(self, partitions: Sequence[int]) -> None:
        consumer, progress = self._consumer, self.progress
        while not self._stopping.is_set():
            try:
                batch = await consumer.fetch(self._fetch_timeout_ms, self._max_batch)
            except KafkaAuthError:
                # a new session, with a new client: the client keeps a refused topic's authorization error
                # until its next metadata refresh (minutes), so a READ granted again was not seen (issue 14)
                raise
            except KafkaError as exc:
                self._failed(exc, "fetch failed")
                self.state = "backing_off"
                await self._wait(self._backoff.next())
                continue
            fetched_at = time.monotonic()
            self.state = "running"
            self._backoff.reset()
            if batch:
                events, last = self._decode(batch)
                if events:
                    await self.sink.on_events(events)
                progress.deliver(last)
            progress.rate.sample(time.monotonic(), progress.records_total)
            due = time.monotonic() - self._last_checkpoint >= self._checkpoint_s
            if not batch or due:
                # Control records and aborted transactions move the position without any record:
                # only the consumer knows. Asked after the sink returned, so it is delivered too.
                progress.deliver(await consumer.positions(partitions))
            if due:
                await self._checkpoint()
            if self._interval_s > 0 and batch and progress.caught_up and _records(batch) < self._max_batch:
                # Caught up on a busy cluster: without a pause each fetch brings the few records appended
                # since the last one (2,500 commits a second came in ~110 fetches a second, each a round
                # trip and a batch through the sinks). Catching up, or a full batch, goes on at once.
                pause = self._interval_s - (time.monotonic() - fetched_at)
                if pause > 0:
                    await self._wait(pause)

    def _decode(self, batch: Mapping[int, Sequence[RawRecord]]) -> tuple[list[TailEvent], dict[int, int]]:
        """Events in offset order per partition, and the next offset after each partition's records."""
        cluster = self.cluster
        events: list[TailEvent] = []
        append = events.append
        last: dict[int, int] = {}
        records = unknown = dropped = 0
        scope = None if self.scope.everything else self.scope
        for partition, fetched in batch.items():
            if not fetched:
                continue
            records += len(fetched)
            for rec in fetched:
                if scope is not None and not _in_scope(scope, rec.key):
                    dropped += 1  # the value is never decoded
                    continue
                try:
                    record = decode(rec.key, rec.value, offset=rec.offset, partition=partition)  # type: ignore[arg-type]
                except Exception as exc:  # DecodeError, or a None key: count, skip, never stall
                    self._decode_failed(exc, partition, rec.offset)
                    continue
                if type(record) is UnknownRecord:
                    unknown += 1
                    continue
                append(TailEvent(cluster, partition, rec.offset, rec.timestamp, record))
            last[partition] = fetched[-1].offset + 1
        self.progress.count(records, len(events), unknown, dropped)
        return events, last

    # ------------------------------------------------------------------ helpers
    async def _refresh_ends(self, partitions: Sequence[int]) -> None:
        """End offsets every ``end_offsets_seconds``, for lag; failures only logged."""
        while True:
            await asyncio.sleep(self._ends_s)
            try:
                self.progress.update_ends(await self._consumer.end_offsets(partitions))
            except KafkaError as exc:
                log.info(
                    "tail %s: end offsets unavailable: %s", self.cluster, exc, extra={"cluster": self.cluster}
                )

    async def _checkpoint(self) -> None:
        """Save delivered positions that changed; a store failure is logged and retried next time."""
        self._last_checkpoint = time.monotonic()
        store, changed = self._store, self.progress.unsaved()
        if store is None or not changed:
            return
        now = self._clock()

        def save() -> None:
            for partition, offset in sorted(changed.items()):
                store.set_tail_position(self.cluster, partition, offset, now)

        try:
            await asyncio.to_thread(save)
        except StoreWriteError:  # the disk refuses writes: the store's health logs it, once
            return
        except OffsetguardError as exc:
            log.warning(
                "tail %s: positions not saved: %s", self.cluster, exc, extra={"cluster": self.cluster}
            )
            return
        self.progress.mark_saved(changed, now)

    async def _wait(self, seconds: float) -> bool:
        """Sleep ``seconds`` or until stop; True when stopping."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)
        return self._stopping.is_set()

    def _failed(self, exc: OffsetguardError, what: str) -> None:
        self.progress.failed(exc)
        log.warning("tail %s: %s: %s", self.cluster, what, exc, extra={"cluster": self.cluster})

    def _decode_failed(self, exc: Exception, partition: int, offset: int) -> None:
        self.progress.decode_errors += 1
        n = self.progress.decode_errors
        if n <= LOGGED_DECODE_ERRORS or n % 1000 == 0:
            log.warning(
                "tail %s: skipped undecodable record at partition %d offset %d: %s",
                self.cluster,
                partition,
                offset,
                exc,
                extra={"cluster": self.cluster, "partition": partition, "offset": offset},
            )


def _in_scope(scope: Scope, key: bytes | None) -> bool:
    """Whether the record keyed ``key`` is in ``scope``; a key that cannot be read is kept, for the
    decoder to count as undecodable or unknown."""
    names = key_names(key) if key is not None else None
    return names is None or scope.record_in(*names)


def _records(batch: Mapping[int, Sequence[RawRecord]]) -> int:
    return sum(map(len, batch.values()))


def _cancelling() -> bool:
    """Whether the running task itself is being cancelled (not a cancellation a library let out)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
