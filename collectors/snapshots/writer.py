"""Taking a snapshot: read a group's ``__consumer_offsets`` partition from log start to the captured end.

:func:`take_snapshot` finds the partition with :func:`collectors.codec.partition_for` and the real
partition count, captures the high watermark once at the start, reads (read_uncommitted) up to it and
writes ``records.jsonl.gz``, ``state.json`` and ``manifest.json`` into ``.partial-<id>``; only the final
rename to ``<id>`` makes the snapshot visible, so no reader ever sees half of one. Undecodable and unknown
records are written and counted, never fatal; the records of groups, topics or pairs out of the cluster's
scope are neither decoded nor written, only counted, and a group out of scope is refused. It blocks: call
it from a worker thread in async code.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import collectors.snapshots.ids as ids
import collectors.snapshots.retention as retention
from collectors.codec import (
    GroupTombstone,
    OffsetCommit,
    OffsetCommitTombstone,
    Record,
    UnknownRecord,
    decode,
    partition_for,
)
from collectors.codec.keys import key_names
from collectors.errors import DecodeError
from collectors.raw_reader import TOPIC, RawRecord, RawRecordReader
from collectors.scope import EVERYTHING, Scope
from collectors.snapshots.files import CappedGzipWriter, fsync_dir, sha256_of, write_json
from collectors.snapshots.fold import OffsetFold
from collectors.snapshots.lines import line
from collectors.snapshots.model import (
    FORMAT_VERSION,
    MANIFEST_FILE,
    RECORDS_FILE,
    STATE_FILE,
    Progress,
    SnapshotCounts,
    SnapshotError,
    SnapshotIndex,
    SnapshotInfo,
    SnapshotResult,
)

FETCH_BYTES = 4 * 1024 * 1024
MAX_EMPTY_FETCHES = 5  # fetches in a row that make no progress below the captured end before giving up
TRIGGER_PATTERN = re.compile(r"^[A-Za-z0-9._:-]{1,200}$")


@dataclass(slots=True)
class _Read:
    """What the read loop produced."""

    counts: SnapshotCounts = field(default_factory=SnapshotCounts)
    fold: OffsetFold = field(default_factory=OffsetFold)
    first: int | None = None
    last: int | None = None
    truncated: bool = False


def take_snapshot(
    reader: RawRecordReader,
    *,
    cluster: str,
    group: str,
    directory: Path,
    max_bytes: int,
    keep: int,
    trigger: str = "manual",
    index: SnapshotIndex | None = None,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.time,
    fetch_bytes: int = FETCH_BYTES,
    scope: Scope = EVERYTHING,
) -> SnapshotResult:
    """Snapshot ``group``'s ``__consumer_offsets`` partition into a new directory under ``directory``.

    ``max_bytes`` caps ``records.jsonl.gz`` (reading stops there and the manifest says ``truncated``);
    after the snapshot is in place, the oldest snapshots beyond ``keep`` are deleted (index rows too).
    Raises :class:`collectors.errors.KafkaError` from the reader and :class:`SnapshotError` for files.
    """
    if not TRIGGER_PATTERN.fullmatch(trigger):
        raise SnapshotError(f"invalid trigger {trigger!r}: letters, digits and ._:- only", group=group)
    if not scope.group_in(group):
        raise SnapshotError(f"group {group!r} is excluded by the scope of cluster {cluster}", group=group)
    partition_count = reader.partition_count()
    partition = partition_for(group, partition_count)
    log_start, end = reader.partition_range(partition)
    created_at = clock()
    snapshot_id = ids.new_id(created_at)
    final = ids.resolve(directory, snapshot_id)
    partial = final.with_name(f"{ids.PARTIAL_PREFIX}{snapshot_id}")
    where: dict[str, Any] = {"cluster": cluster, "group": group, "topic": TOPIC, "partition": partition}
    try:
        partial.mkdir(parents=True)
        read = _read(
            reader,
            partial / RECORDS_FILE,
            partition,
            (log_start, end),
            max_bytes,
            progress,
            fetch_bytes,
            None if scope.everything else scope,
        )
        state = read.fold.state(
            cluster=cluster, partition=partition, group=group, last_offset=read.last, end_offset=end
        )
        write_json(partial / STATE_FILE, state)
        files: dict[str, dict[str, Any]] = {
            name: {
                "sha256": sha256_of(partial / name),
                "bytes": (partial / name).stat().st_size,
                "truncated": name == RECORDS_FILE and read.truncated,
            }
            for name in (RECORDS_FILE, STATE_FILE)
        }
        manifest = {
            "format_version": FORMAT_VERSION,
            "id": snapshot_id,
            "cluster": cluster,
            "group": group,
            "topic": TOPIC,
            "partition": partition,
            "partition_count": partition_count,
            "isolation_level": "read_uncommitted",
            "offsets": {"log_start": log_start, "first": read.first, "last": read.last, "end": end},
            "trigger": trigger,
            "created_at": created_at,
            "created_at_iso": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(created_at)),
            "completed_at": clock(),
            "counts": read.counts.as_dict(),
            "group_offsets": len(read.fold.group_offsets(group)),
            "max_bytes": max_bytes,
            "truncated": read.truncated,
            "files": files,
        }
        write_json(partial / MANIFEST_FILE, manifest)
        fsync_dir(partial)
        os.rename(partial, final)  # the snapshot appears whole, or not at all
        fsync_dir(final.parent)
    except OSError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise SnapshotError(
            f"cannot write snapshot: {exc.strerror or exc}", snapshot_id=snapshot_id, **where
        ) from exc
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    info = SnapshotInfo(
        id=snapshot_id,
        cluster=cluster,
        group=group,
        partition=partition,
        trigger=trigger,
        created_at=created_at,
        path=str(final),
        first_offset=read.first,
        last_offset=read.last,
        record_count=read.counts.total,
        bytes=sum(int(f["bytes"]) for f in files.values()) + (final / MANIFEST_FILE).stat().st_size,
        manifest_sha256=sha256_of(final / MANIFEST_FILE),
        truncated=read.truncated,
    )
    if index is not None:
        index.add_snapshot(info)
    deleted = retention.prune(directory, keep, index)
    return SnapshotResult(info, read.counts, log_start, end, deleted)


def _read(
    reader: RawRecordReader,
    path: Path,
    partition: int,
    offsets: tuple[int, int],
    max_bytes: int,
    progress: Progress | None,
    fetch_bytes: int,
    scope: Scope | None = None,
) -> _Read:
    """Read ``offsets`` = ``[start, end)`` of ``partition`` into ``path``, counting and folding as it goes."""
    start, end = offsets
    out = CappedGzipWriter(path, max_bytes)
    read, position, empty = _Read(), start, 0
    total = max(end - start, 0)
    try:
        while position < end and not read.truncated:
            before = position
            fetched = reader.fetch(partition, position, fetch_bytes)
            for raw in fetched.records:
                if raw.offset >= end:
                    break
                if raw.offset < position:
                    continue  # a reader may hand back the start of a batch; it is already written
                if scope is not None and not _in_scope(scope, raw):
                    read.counts.out_of_scope += 1
                    position = raw.offset + 1
                    continue
                if not _write(out, read, raw):
                    read.truncated = True
                    break
                position = raw.offset + 1
            if not read.truncated:
                # Past control batches and compacted-away offsets too, even when no record came back.
                position = max(position, fetched.next_offset)
            empty = empty + 1 if position == before else 0
            if empty >= MAX_EMPTY_FETCHES:
                raise SnapshotError(
                    f"no progress reading at offset {position} (captured end {end})",
                    topic=TOPIC,
                    partition=partition,
                )
            if progress is not None:
                progress(min(position, end) - start, total)
        read.counts.aborted = read.fold.aborted
        out.close()
    except BaseException:
        out.abort()
        raise
    return read


def _write(out: CappedGzipWriter, read: _Read, raw: RawRecord) -> bool:
    """Decode, write (False if the size cap is reached), count and fold one record."""
    record, error = _decode(raw)
    text = json.dumps(line(raw, record, error), separators=(",", ":"), ensure_ascii=False)
    if not out.write(text.encode("utf-8") + b"\n"):
        return False
    _count(read.counts, raw, record, error)
    read.fold.apply(raw, record)
    if read.first is None:
        read.first = raw.offset
    read.last = raw.offset
    return True


def _in_scope(scope: Scope, raw: RawRecord) -> bool:
    """Markers, and keys that cannot be read (the decoder reports those), are kept."""
    names = None if raw.control or raw.key is None else key_names(raw.key)
    return names is None or scope.record_in(*names)


def _decode(raw: RawRecord) -> tuple[Record | None, str | None]:
    if raw.control:
        return None, None
    if raw.key is None:
        return None, "record has no key"
    try:
        return decode(raw.key, raw.value, offset=raw.offset, partition=raw.partition), None
    except DecodeError as exc:
        return None, str(exc)


def _count(counts: SnapshotCounts, raw: RawRecord, record: Record | None, error: str | None) -> None:
    counts.total += 1
    if raw.control:
        counts.control += 1
        return
    if raw.transactional:
        counts.transactional += 1
    if error is not None or record is None:
        counts.decode_errors += 1
    elif isinstance(record, UnknownRecord):
        counts.unknown += 1
    elif isinstance(record, OffsetCommit):
        counts.commits += 1
    elif isinstance(record, OffsetCommitTombstone):
        counts.tombstones += 1
        counts.offset_tombstones += 1
    elif isinstance(record, GroupTombstone):
        counts.tombstones += 1
        counts.group_tombstones += 1
    else:
        counts.group_records += 1
