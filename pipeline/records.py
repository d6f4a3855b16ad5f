"""Every record type the Python codec decodes, decoded inside Spark: the ``records`` frame.

Whole Arrow batches (``mapInArrow``, no per-row UDF). Offset commits and their tombstones as brokers
write them (nearly every record of a real cluster) are decoded in bulk by the numpy path of
:mod:`pipeline.arrow_decode`. The rest — classic group metadata with its embedded consumer protocol,
KIP-848, share and streams group records, other versions, corrupt bytes — goes to
:func:`collectors.codec.decode` record by record, so the nested records keep one definition (the
codec's). :func:`record_row` is the one mapping from a codec record to a row; tests build the expected
frame with it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame

from collectors.codec import (
    OffsetCommit,
    OffsetCommitTombstone,
    Record,
    decode,
)
from collectors.errors import DecodeError
from collectors.snapshots.lines import jsonable
from pipeline.arrow_decode import Bytes, offset_records

RECORD_FIELDS: tuple[tuple[str, pa.DataType], ...] = (
    ("source_partition", pa.int32()),
    ("source_offset", pa.int64()),
    ("type", pa.string()),  # the codec's class name, or DecodeError
    ("record_type", pa.int32()),
    ("version", pa.int32()),  # null for tombstones
    ("group", pa.string()),
    ("topic", pa.string()),
    ("partition", pa.int32()),
    ("offset", pa.int64()),
    ("leader_epoch", pa.int32()),
    ("metadata", pa.string()),
    ("commit_timestamp", pa.int64()),
    ("expire_timestamp", pa.int64()),
    ("topic_id", pa.string()),
    ("fields", pa.string()),  # every other record: the codec's fields as sorted JSON (bytes in base64)
)
RECORD_SCHEMA = pa.schema([pa.field(name, kind) for name, kind in RECORD_FIELDS])
RECORDS_DDL = ", ".join(
    f"`{name}` {'string' if kind == pa.string() else 'int' if kind == pa.int32() else 'bigint'}"
    for name, kind in RECORD_FIELDS
)
_COMMIT_TYPES = pa.array(["OffsetCommit", "OffsetCommitTombstone"])
_COMMIT_FIELDS = ("offset", "leader_epoch", "metadata", "commit_timestamp", "expire_timestamp", "topic_id")


def record_row(record: Record | None, source_partition: int, source_offset: int) -> dict[str, Any]:
    """The ``records`` row of one codec record (None: the bytes did not decode)."""
    row: dict[str, Any] = dict.fromkeys(RECORD_SCHEMA.names)
    row["source_partition"], row["source_offset"] = source_partition, source_offset
    if record is None:
        row["type"] = "DecodeError"
        return row
    row["type"] = type(record).__name__
    row["record_type"] = record.record_type
    row["version"] = getattr(record, "version", None)
    if isinstance(record, OffsetCommit | OffsetCommitTombstone):
        row["group"], row["topic"], row["partition"] = record.group, record.topic, record.partition
        if isinstance(record, OffsetCommit):
            for name in _COMMIT_FIELDS:
                row[name] = getattr(record, name)
        return row
    row["group"] = getattr(record, "group", None)
    row["fields"] = json.dumps(jsonable(record), sort_keys=True, separators=(",", ":"))
    return row


def decode_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``records`` rows of one Arrow batch of raw records, decoded by the Python codec."""
    cols = batch.to_pydict()
    rows = []
    for part, off, key, value in zip(
        cols["source_partition"], cols["source_offset"], cols["key"], cols["value"], strict=True
    ):
        record: Record | None = None
        if key is not None:
            try:
                record = decode(key, value, offset=off, partition=part)
            except DecodeError:
                record = None
        rows.append(record_row(record, part, off))
    return pa.RecordBatch.from_pylist(rows, schema=RECORD_SCHEMA)


def records_batch(batch: pa.RecordBatch) -> pa.Table:
    """``records`` rows of one Arrow batch of raw records: the numpy path's offset commits and
    tombstones, then the codec's rows for the rest (:func:`decode_batch`)."""
    if not batch.num_rows:
        return pa.Table.from_batches([], schema=RECORD_SCHEMA)
    value = Bytes(batch.column("value"))
    fast, columns = offset_records(Bytes(batch.column("key")), value)
    out = {name: batch.column(name) for name in ("source_partition", "source_offset")}
    out["type"] = _COMMIT_TYPES.take(pa.array((~value.valid).astype(np.int8)))  # a null value: tombstone
    out |= {name: columns[name] for name in RECORD_SCHEMA.names[3:-1]}
    out["fields"] = pa.nulls(batch.num_rows, pa.string())
    commits = pa.RecordBatch.from_pydict(out, schema=RECORD_SCHEMA)
    if not fast.all():
        commits = commits.filter(pa.array(fast))
    rest = decode_batch(batch.take(pa.array(np.flatnonzero(~fast))))
    return pa.Table.from_batches([commits, rest])


def _records_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        yield from records_batch(batch).to_batches()


def decode_records(raw: DataFrame) -> DataFrame:
    """Every raw record as a ``records`` row."""
    columns = raw.select("source_partition", "source_offset", "key", "value")
    return columns.mapInArrow(_records_batches, RECORDS_DDL)
