"""The ``records`` frame equals the Python codec's records (:func:`pipeline.records.record_row`) row for
row: every type and version, broker-written commits (the numpy path) and corrupted bytes, and through
Spark."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pyspark.testing import assertDataFrameEqual

from collectors.codec import decode
from collectors.errors import DecodeError
from pipeline import schema
from pipeline.records import RECORDS_DDL, decode_records, record_row, records_batch
from tests.pipeline.corpus import Pairs, broker_commits, raw_corpus

CORRUPT: Pairs = [
    (b"\x00\x01\x00\x01g\x00\x01t\x00\x00\x00\x00", b"\x00\x03\x00"),  # truncated v3 value
    (b"\x00\x01\x00\x09g", None),  # key shorter than its group length
]


def _pairs() -> Pairs:
    return [*raw_corpus(), *broker_commits(400), *CORRUPT]


def _expected(pairs: Pairs) -> list[dict[str, Any]]:
    out = []
    for i, (key, value) in enumerate(pairs):
        try:
            record = decode(key, value) if key is not None else None
        except DecodeError:
            record = None
        out.append(record_row(record, 7, i))
    return out


def test_records_batch_equals_codec_rows() -> None:
    pairs = _pairs()
    batch = pa.RecordBatch.from_pydict(
        {
            "source_partition": pa.array([7] * len(pairs), pa.int32()),
            "source_offset": pa.array(range(len(pairs)), pa.int64()),
            "key": pa.array([k for k, _ in pairs], pa.binary()),
            "value": pa.array([v for _, v in pairs], pa.binary()),
        }
    )

    got = sorted(records_batch(batch).to_pylist(), key=lambda r: r["source_offset"])

    assert got == _expected(pairs)
    assert {r["type"] for r in got} >= {
        "OffsetCommit",
        "OffsetCommitTombstone",
        "GroupMetadata",
        "DecodeError",
    }


def test_decode_records_spark_equals_codec_rows(spark: Any) -> None:
    pairs = _pairs()
    raw = spark.createDataFrame([("c", 7, i, 0, k, v) for i, (k, v) in enumerate(pairs)], schema.RAW_DDL)

    assertDataFrameEqual(decode_records(raw), spark.createDataFrame(_expected(pairs), RECORDS_DDL))
