"""Decoding ``__consumer_offsets`` in Arrow batches: the history frame without a per-row Python UDF.

:func:`decode_history` hands whole Arrow batches of the raw frame to :func:`decode_batch` (``mapInArrow``).
Offset commits (types 0 and 1 with a v3 or v4 value, the only layouts Kafka 2.1+ brokers write) and their
tombstones — nearly every record — are decoded by numpy over the whole batch: big-endian integers are
read at per-row positions, strings gathered into Arrow buffers, the TopicId tag base64-encoded in bulk.
Anything else (group records, older or newer value versions, unusual tags, non-ASCII names, corrupt
bytes) goes to the Python codec one record at a time and becomes the row the archive would hold
(:func:`pipeline.archive.history_row`); what the history does not keep is dropped, and what the codec
rejects is dropped and counted.
Both paths give what the archive holds for the same record: the tests check them against the codec.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import Accumulator
from pyspark.sql import DataFrame

from collectors.codec import decode
from collectors.errors import DecodeError
from pipeline import schema
from pipeline.archive import ARCHIVE_SCHEMA, history_row

HISTORY_SCHEMA = pa.schema([pa.field("cluster", pa.string(), nullable=False), *ARCHIVE_SCHEMA])
_PAD = 32  # zero bytes after each buffer: fixed-width reads past a short record stay in bounds
_B64 = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", dtype=np.uint8)
Ints = npt.NDArray[Any]  # int64 positions, lengths and values
_KINDS = pa.array([schema.COMMIT, schema.OFFSET_TOMBSTONE])
_GROUP_COLUMNS = ("group_state", "generation", "protocol_type", "members")


def decode_history(raw: DataFrame, undecodable: Accumulator[int] | None = None) -> DataFrame:
    """The history frame (:data:`pipeline.schema.HISTORY_COLUMNS`) of a raw frame; records whose bytes
    do not decode (or have no key) are left out and added to ``undecodable`` each time the frame is
    computed (the job computes it once, into Parquet)."""

    def batches(raw_batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in raw_batches:
            table, skipped = decode_batch(batch)
            if skipped and undecodable is not None:
                undecodable.add(skipped)
            yield from table.to_batches()

    columns = raw.select(*schema.HISTORY_COLUMNS[:4], "key", "value")
    return columns.mapInArrow(batches, schema.HISTORY_DDL)


class Bytes:
    """A binary column as one zero-padded byte buffer with per-row start, length and validity."""

    def __init__(self, column: pa.Array) -> None:
        n = len(column)
        wide = pa.types.is_large_binary(column.type)
        _, offsets_buf, data_buf = column.buffers()
        every: Ints = np.frombuffer(offsets_buf, dtype=np.int64 if wide else np.int32)
        offsets: Ints = every[column.offset : column.offset + n + 1].astype(np.int64)
        data: Ints = np.zeros(0, np.uint8) if data_buf is None else np.frombuffer(data_buf, dtype=np.uint8)
        self.data: Ints = np.concatenate([data[: offsets[-1] if n else 0], np.zeros(_PAD, np.uint8)])
        self.start: Ints = offsets[:-1]
        self.length: Ints = offsets[1:] - offsets[:-1]
        self.valid: Ints = column.is_valid().to_numpy(zero_copy_only=False)

    def fixed(self, pos: Ints, width: int) -> Ints:
        """The signed big-endian integer of ``width`` (2, 4, 8) bytes at each absolute position ``pos``."""
        return self.span(pos, width).view(f">i{width}").ravel().astype(np.int64)

    def span(self, pos: Ints, width: int) -> Ints:
        """The ``width`` bytes at each absolute position ``pos``, one row each."""
        windows = np.lib.stride_tricks.sliding_window_view(self.data, width)
        return windows[np.clip(pos, 0, len(self.data) - _PAD)]

    def u8(self, pos: Ints) -> Ints:
        """The byte at each absolute position ``pos`` (0 past the end)."""
        return self.data[np.clip(pos, 0, len(self.data) - 1)].astype(np.int64)

    def strings(self, pos: Ints, length: Ints) -> tuple[pa.Array, npt.NDArray[Any]]:
        """The byte strings at ``pos`` of ``length`` as an Arrow string array, and which hold non-ASCII."""
        ends = np.zeros(len(pos) + 1, np.int64)
        np.cumsum(length, out=ends[1:])
        index = np.repeat(pos - ends[:-1], length) + np.arange(ends[-1])
        flat = self.data[index]
        array = pa.StringArray.from_buffers(len(pos), pa.py_buffer(ends.astype(np.int32)), pa.py_buffer(flat))
        return array, ~pc.string_is_ascii(array).to_numpy(zero_copy_only=False)


def decode_batch(batch: pa.RecordBatch) -> tuple[pa.Table, int]:
    """History rows of one Arrow batch of raw records (``cluster``, ``source_partition``,
    ``source_offset``, ``timestamp``, ``key``, ``value``), and how many records did not decode."""
    if not batch.num_rows:
        return pa.Table.from_batches([], schema=HISTORY_SCHEMA), 0
    key, value = Bytes(batch.column("key")), Bytes(batch.column("value"))
    fast, columns = offset_records(key, value)
    head = {name: batch.column(name) for name in schema.HISTORY_COLUMNS[:4]}
    out = pa.RecordBatch.from_pydict({**head, **columns}, schema=HISTORY_SCHEMA)
    if not fast.all():
        out = out.filter(pa.array(fast))
    slow = np.flatnonzero(~fast)
    rest, skipped = _codec_rows(batch.take(pa.array(slow))) if len(slow) else ([], 0)
    return pa.Table.from_batches([out, pa.RecordBatch.from_pylist(rest, schema=HISTORY_SCHEMA)]), skipped


def offset_records(key: Bytes, value: Bytes) -> tuple[Ints, dict[str, pa.Array]]:
    """Which rows are offset commits or tombstones the fast path decodes, and their history columns plus
    ``version`` (the value's; null for tombstones), for every row: only those rows are meaningful."""
    ok, key_columns = _offset_keys(key)
    commit, non_ascii, value_columns = _offset_values(value, ok)
    tomb = ~value.valid
    return ok & (tomb | commit) & ~non_ascii, {
        "kind": _KINDS.take(pa.array(tomb.astype(np.int8))),
        **key_columns,
        **value_columns,
        **{name: pa.nulls(len(ok), ARCHIVE_SCHEMA.field(name).type) for name in _GROUP_COLUMNS},
    }


def _offset_keys(key: Bytes) -> tuple[Ints, dict[str, pa.Array]]:
    """OffsetCommitKey (type 0/1: group, topic, partition) of each row, and which hold exactly that in
    ASCII names."""
    ks = key.start
    ok = key.valid & (key.length >= 4)
    rt = key.fixed(ks, 2)
    glen = key.fixed(ks + 2, 2)
    ok &= ((rt == 0) | (rt == 1)) & (glen >= 0) & (key.length >= 6 + glen)
    glen = np.where(ok, glen, 0)
    tlen = key.fixed(ks + 4 + glen, 2)
    ok &= (tlen >= 0) & (key.length == 10 + glen + np.maximum(tlen, 0))
    tlen = np.where(ok, tlen, 0)
    group, group_high = key.strings(np.where(ok, ks + 4, 0), glen)
    topic, topic_high = key.strings(np.where(ok, ks + 6 + glen, 0), tlen)
    partition = key.fixed(ks + 6 + glen + tlen, 4)
    columns = {
        "record_type": pa.array(rt.astype(np.int32)),
        "group": group,
        "topic": topic,
        "partition": pa.array(partition.astype(np.int32)),
    }
    return ok & ~group_high & ~topic_high, columns


def _offset_values(value: Bytes, ok: Ints) -> tuple[Ints, Ints, dict[str, pa.Array]]:
    """OffsetCommitValue v3 or v4 (at most the TopicId tag) of each row: which are, which have non-ASCII
    metadata (left to the codec), and their columns (null where not a commit or not ``ok``)."""
    vs, vlen = value.start, value.length
    version = np.where(vlen >= 2, value.fixed(vs, 2), -1)
    v3 = value.valid & (version == 3) & (vlen >= 16)
    mlen3 = np.where(v3, value.fixed(vs + 14, 2), 0)
    v3 &= (mlen3 >= 0) & (vlen == 24 + np.maximum(mlen3, 0))
    v4 = value.valid & (version == 4) & (vlen >= 15)
    mbyte = np.where(v4, value.u8(vs + 14), 0)
    v4 &= (mbyte >= 1) & (mbyte < 0x80)  # a one-byte compact length: metadata under 127 bytes
    mlen4 = np.where(v4, mbyte - 1, 0)
    tags = vs + 23 + mlen4  # after offset, epoch, metadata and commit timestamp
    no_tags = v4 & (value.u8(tags) == 0) & (vlen == 24 + mlen4)
    # exactly one tagged field, TopicId: tag 0 of 16 bytes (what Kafka 4 writes)
    only_id = (value.u8(tags) == 1) & (value.u8(tags + 1) == 0) & (value.u8(tags + 2) == 16)
    with_id = v4 & only_id & (vlen == 42 + mlen4)
    commit = v3 | no_tags | with_id
    live = ok & commit
    mlen = np.where(v3, mlen3, mlen4)
    mstart = vs + np.where(v3, 16, 15)
    metadata, non_ascii = value.strings(np.where(live, mstart, 0), np.where(live, mlen, 0))
    epoch = value.fixed(vs + 10, 4)
    columns = {
        "version": pa.array(version.astype(np.int32), mask=~value.valid),
        "offset": pa.array(value.fixed(vs + 2, 8), mask=~live),
        "leader_epoch": pa.array(epoch.astype(np.int32), mask=~live | (epoch == -1)),
        "metadata": pc.if_else(pa.array(live), metadata, pa.scalar(None, pa.string())),
        "commit_timestamp": pa.array(value.fixed(mstart + mlen, 8), mask=~live),
        "expire_timestamp": pa.nulls(len(ok), pa.int64()),
        "topic_id": _topic_ids(value, tags + 3, live & with_id),
    }
    return commit, non_ascii, columns


def _topic_ids(value: Bytes, pos: np.ndarray, present: np.ndarray) -> pa.Array:
    """Kafka's text form (URL-safe base64, unpadded: 22 characters) of the 16-byte Uuid at ``pos``."""
    n = len(pos)
    raw = np.zeros((n, 18), np.uint8)  # 6 groups of 3 bytes, the last two padding
    raw[:, :16] = value.span(np.where(present, pos, 0), 16)
    groups = raw.reshape(n, 6, 3).astype(np.uint32)
    word = (groups[..., 0] << 16) | (groups[..., 1] << 8) | groups[..., 2]
    sextets = np.empty((n, 6, 4), np.uint8)
    for i, shift in enumerate((18, 12, 6, 0)):
        sextets[..., i] = (word >> shift) & 63
    text = _B64[sextets.reshape(n, 24)[:, :22]].ravel()
    offsets = pa.py_buffer((np.arange(n + 1) * 22).astype(np.int32))
    ids = pa.StringArray.from_buffers(n, offsets, pa.py_buffer(text))
    return pc.if_else(pa.array(present), ids, pa.scalar(None, pa.string()))


def _codec_rows(batch: pa.RecordBatch) -> tuple[list[dict[str, Any]], int]:
    """History rows of the records the fast path left, one codec call each, and the undecodable count."""
    rows = []
    skipped = 0
    cols = batch.to_pydict()
    for cluster, part, off, ts, key, value in zip(
        cols["cluster"],
        cols["source_partition"],
        cols["source_offset"],
        cols["timestamp"],
        cols["key"],
        cols["value"],
        strict=True,
    ):
        try:
            record = decode(key, value, offset=off, partition=part) if key is not None else None
        except DecodeError:
            record = None
        if record is None:
            skipped += 1
            continue
        row = history_row(record, part, off, ts)
        if row is not None:
            rows.append({"cluster": cluster, **row})
    return rows, skipped
