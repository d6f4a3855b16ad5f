"""The commit archive: every decoded commit, tombstone and group-state record of the live tail, kept as
Parquet under ``<directory>/cluster=<c>/date=<YYYY-MM-DD>/hour=<HH>/part-*.parquet``.

:class:`ArchiveSink` is a :class:`collectors.tail_model.TailSink`. Each batch is appended to a spool
file per (cluster, hour) — an Arrow IPC stream, flushed (and fsynced) before ``on_events`` returns, so a
batch the tail checkpoints is on disk. A spool is *rolled* into one Parquet file when it is
``roll_seconds`` old or holds ``max_rows_per_file`` rows: written as a hidden temporary, fsynced, then
renamed into place, so readers only ever see whole files, and no file is written twice. Spools left by
a crash are rolled at the next start (up to their last complete batch). Hour directories older than
``retention_hours`` are deleted on roll. Delivery is at least once: the pipeline drops repeated
(cluster, source partition, source offset).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from alerts.events import GROUP_METADATA_TYPES
from collectors.codec import (
    ConsumerGroupMetadata,
    GroupMetadata,
    GroupTombstone,
    OffsetCommit,
    OffsetCommitTombstone,
    Record,
)
from collectors.tail_model import TailEvent, TailSink
from pipeline import schema
from pipeline.errors import ArchiveError

_ARROW_TYPES = {"int": pa.int32(), "bigint": pa.int64(), "string": pa.string()}
ARCHIVE_SCHEMA = pa.schema(
    [pa.field(name, _ARROW_TYPES[kind], nullable=nullable) for name, kind, nullable in schema.HISTORY_FIELDS]
)
SPOOL_DIR = ".spool"


class ArchiveConfig(Protocol):
    """What the sink is told (``service.settings.ArchiveSettings`` has these)."""

    @property
    def directory(self) -> Path: ...

    @property
    def roll_seconds(self) -> float: ...

    @property
    def max_rows_per_file(self) -> int: ...

    @property
    def retention_hours(self) -> float: ...

    @property
    def fsync(self) -> bool: ...


def event_row(event: TailEvent) -> dict[str, Any] | None:
    """The archive row of one tail event, or None for records the archive does not keep."""
    return history_row(event.record, event.partition, event.offset, event.timestamp)


def history_row(r: Record, partition: int, offset: int, timestamp: int) -> dict[str, Any] | None:
    """The history row (:data:`pipeline.schema.HISTORY_FIELDS`) of one decoded record read at ``offset``
    of ``__consumer_offsets`` partition ``partition``; None for records the history does not keep."""
    base: dict[str, Any] = {
        "source_partition": partition,
        "source_offset": offset,
        "timestamp": timestamp,
        "record_type": r.record_type,
    }
    if isinstance(r, OffsetCommit):
        return {
            **base,
            "kind": schema.COMMIT,
            "group": r.group,
            "topic": r.topic,
            "partition": r.partition,
            "offset": r.offset,
            "leader_epoch": r.leader_epoch,
            "metadata": r.metadata,
            "commit_timestamp": r.commit_timestamp,
            "expire_timestamp": r.expire_timestamp,
            "topic_id": r.topic_id,
        }
    if isinstance(r, OffsetCommitTombstone):
        return {
            **base,
            "kind": schema.OFFSET_TOMBSTONE,
            "group": r.group,
            "topic": r.topic,
            "partition": r.partition,
        }
    if isinstance(r, GroupMetadata):
        return {
            **base,
            "kind": schema.GROUP_METADATA,
            "group": r.group,
            "group_state": "Stable" if r.members else "Empty",
            "generation": r.generation,
            "protocol_type": r.protocol_type,
            "members": len(r.members),
        }
    if isinstance(r, ConsumerGroupMetadata):
        return {
            **base,
            "kind": schema.CONSUMER_GROUP_METADATA,
            "group": r.group,
            "generation": r.epoch,
            "protocol_type": "consumer",
        }
    if isinstance(r, GroupTombstone) and r.record_type in GROUP_METADATA_TYPES:
        return {**base, "kind": schema.GROUP_TOMBSTONE, "group": r.group, "group_state": "Dead"}
    return None


def hour_of(ms: int) -> tuple[str, str]:
    at = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return at.strftime("%Y-%m-%d"), at.strftime("%H")


@dataclass
class _Spool:
    path: Path
    writer: ipc.RecordBatchStreamWriter
    sink: Any  # the open file
    rows: int
    opened_at: float


class ArchiveSink:
    """Archives tail events, then hands them to ``then`` (the next sink), if any."""

    def __init__(
        self, config: ArchiveConfig, then: TailSink | None = None, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.config = config
        self.then = then
        self.clock = clock
        self.root = Path(config.directory)
        self._spools: dict[tuple[str, str, str], _Spool] = {}
        self.files_written = 0
        self.rows_archived = 0
        try:
            (self.root / SPOOL_DIR).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ArchiveError(f"cannot create archive directory: {exc}", path=str(self.root)) from exc
        self.recover()

    async def on_events(self, events: Sequence[TailEvent]) -> None:
        if events:
            await asyncio.to_thread(self.append, events)
        if self.then is not None:
            await self.then.on_events(events)

    def append(self, events: Iterable[TailEvent]) -> None:
        """Spool the rows of ``events`` (blocking); rolls what is due."""
        buckets: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for event in events:
            row = event_row(event)
            if row is not None:
                buckets.setdefault((event.cluster, *hour_of(event.timestamp)), []).append(row)
        try:
            for bucket, rows in buckets.items():
                spool = self._spools.get(bucket) or self._open(bucket)
                spool.writer.write_batch(pa.RecordBatch.from_pylist(rows, schema=ARCHIVE_SCHEMA))
                spool.sink.flush()
                if self.config.fsync:
                    os.fsync(spool.sink.fileno())
                spool.rows += len(rows)
                self.rows_archived += len(rows)
            self.roll_due()
        except OSError as exc:
            raise ArchiveError(f"cannot append to the archive: {exc}", path=str(self.root)) from exc

    def roll_due(self) -> None:
        now = self.clock()
        for bucket, spool in list(self._spools.items()):
            if (
                spool.rows >= self.config.max_rows_per_file
                or now - spool.opened_at >= self.config.roll_seconds
            ):
                self._roll(bucket)

    def close(self) -> None:
        """Roll every open spool (call at shutdown; a crash instead leaves them for :meth:`recover`)."""
        for bucket in list(self._spools):
            self._roll(bucket)

    def _open(self, bucket: tuple[str, str, str]) -> _Spool:
        cluster, date, hour = bucket
        directory = self.root / SPOOL_DIR / f"cluster={cluster}" / f"date={date}" / f"hour={hour}"
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{uuid.uuid4().hex}.arrows"
        sink = open(path, "wb")  # noqa: SIM115 - kept open across batches, closed on roll
        spool = _Spool(path, ipc.new_stream(sink, ARCHIVE_SCHEMA), sink, 0, self.clock())
        self._spools[bucket] = spool
        return spool

    def _roll(self, bucket: tuple[str, str, str]) -> None:
        spool = self._spools.pop(bucket)
        spool.writer.close()
        spool.sink.close()
        self._publish(spool.path, bucket)
        self.prune()

    def _publish(self, spool_path: Path, bucket: tuple[str, str, str]) -> None:
        """Spool -> Parquet (temporary name, fsync, rename), then the spool is deleted."""
        table = read_spool(spool_path)
        if table.num_rows:
            cluster, date, hour = bucket
            final_dir = self.root / f"cluster={cluster}" / f"date={date}" / f"hour={hour}"
            final_dir.mkdir(parents=True, exist_ok=True)
            name = f"part-{int(self.clock() * 1000):013d}-{spool_path.stem[:12]}.parquet"
            tmp = final_dir / f".{name}.tmp"  # hidden: Spark and pyarrow skip dot files
            pq.write_table(table, tmp, compression="zstd")
            if self.config.fsync:
                with open(tmp, "rb") as f:
                    os.fsync(f.fileno())
            os.rename(tmp, final_dir / name)
            if self.config.fsync:
                _fsync_dir(final_dir)
            self.files_written += 1
        spool_path.unlink()

    def recover(self) -> None:
        """Roll spools a previous process left behind (everything up to their last complete batch)."""
        for path in sorted((self.root / SPOOL_DIR).glob("cluster=*/date=*/hour=*/*.arrows")):
            parts = [p.split("=", 1)[1] for p in path.parent.relative_to(self.root / SPOOL_DIR).parts]
            self._publish(path, (parts[0], parts[1], parts[2]))

    def prune(self) -> list[Path]:
        """Delete hour directories older than ``retention_hours``; returns what was deleted."""
        cutoff = self.clock() - self.config.retention_hours * 3600
        deleted = []
        for hour_dir in self.root.glob("cluster=*/date=*/hour=*"):
            try:
                date = hour_dir.parent.name.split("=", 1)[1]
                hour = int(hour_dir.name.split("=", 1)[1])
                end = datetime.strptime(date, "%Y-%m-%d").replace(tzinfo=UTC).timestamp() + (hour + 1) * 3600
            except ValueError:
                continue  # not ours
            if end <= cutoff:
                shutil.rmtree(hour_dir, ignore_errors=True)
                deleted.append(hour_dir)
        return deleted


def read_spool(path: Path) -> pa.Table:
    """The complete batches of a spool file (a torn last batch after a crash is left out)."""
    batches = []
    with contextlib.suppress(pa.ArrowInvalid, OSError), ipc.open_stream(path) as reader:
        for batch in reader:
            batches.append(batch)
    return pa.Table.from_batches(batches, schema=ARCHIVE_SCHEMA)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def archive_sink(config: Any, then: TailSink) -> TailSink:
    """``then`` behind an :class:`ArchiveSink` when ``config.enabled``, else ``then`` itself (the wiring)."""
    return ArchiveSink(config, then) if getattr(config, "enabled", False) else then
