"""Every record type the Python codec decodes, decoded inside Spark: the ``records`` frame.

Offset commits and their tombstones (types 0 and 1, nearly every record of a real cluster) are decoded
by the SQL expressions of :mod:`pipeline.decode`. The rest — classic group metadata with its embedded
consumer protocol, KIP-848, share and streams group records, unknown versions, corrupt bytes — goes
through ``mapInArrow``: whole Arrow batches handed to :func:`collectors.codec.decode`, so no per-row
Python UDF runs and the nested records keep one definition (the codec's). :func:`record_row` is the
one mapping from a codec record to a row; tests build the expected frame with it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from collectors.codec import (
    OffsetCommit,
    OffsetCommitTombstone,
    Record,
    decode,
)
from collectors.errors import DecodeError
from collectors.snapshots.lines import jsonable
from pipeline.decode import commit_values, key_fields, where

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


def _decode_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        yield decode_batch(batch)


def decode_records(raw: DataFrame) -> DataFrame:
    """Every raw record as a ``records`` row: SQL for offset commits, Arrow batches for the rest."""
    keyed = key_fields(raw)
    sql_side = "coalesce(rt in (0, 1) and key_ok and (value is null or ver >= 0), false)"
    commits = commit_values(where(keyed, sql_side))
    ok = "value is null or value_ok"
    commit_rows = commits.select(
        "source_partition",
        "source_offset",
        F.expr(
            "case when value is null then 'OffsetCommitTombstone' "
            f"when {ok} then 'OffsetCommit' else 'DecodeError' end"
        ).alias("type"),
        *[
            F.expr(f"case when {ok} then {name} end").alias(name)
            for name in ("rt", "ver", "group", "topic", "partition", *_COMMIT_FIELDS)
        ],
        F.lit(None).cast("string").alias("fields"),
    ).withColumnsRenamed({"rt": "record_type", "ver": "version"})
    rest = where(keyed, f"not {sql_side}").select("source_partition", "source_offset", "key", "value")
    other_rows = rest.mapInArrow(_decode_batches, RECORDS_DDL)
    return commit_rows.unionByName(other_rows)
