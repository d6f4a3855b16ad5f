"""The Arrow-batched decoder equals the Python codec (mapped as the archive maps it), record for record:
on every type and version the codec knows, on corrupted variants of them, and through Spark."""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa
import pytest

from collectors.codec import decode
from collectors.errors import DecodeError
from pipeline import schema
from pipeline.archive import history_row
from pipeline.arrow_decode import HISTORY_SCHEMA, Bytes, decode_batch, decode_history, offset_records
from tests.collectors.codec import encode as e
from tests.pipeline.corpus import TOPIC_ID, Pairs, broker_commits, raw_corpus


def _batch(pairs: Pairs) -> pa.RecordBatch:
    n = len(pairs)
    return pa.RecordBatch.from_pydict(
        {
            "cluster": ["c"] * n,
            "source_partition": pa.array([7] * n, pa.int32()),
            "source_offset": pa.array(range(n), pa.int64()),
            "timestamp": pa.array([1_700_000_000_000 + i for i in range(n)], pa.int64()),
            "key": pa.array([k for k, _ in pairs], pa.binary()),
            "value": pa.array([v for _, v in pairs], pa.binary()),
        }
    )


def _expected(pairs: Pairs) -> list[dict[str, Any]]:
    out = []
    blank = dict.fromkeys(HISTORY_SCHEMA.names)
    for i, (key, value) in enumerate(pairs):
        if key is None:
            continue
        try:
            record = decode(key, value)
        except DecodeError:
            continue
        row = history_row(record, 7, i, 1_700_000_000_000 + i)
        if row is not None:
            out.append({**blank, "cluster": "c", **row})
    return out


def _decoded(pairs: Pairs) -> list[dict[str, Any]]:
    table, _ = decode_batch(_batch(pairs))
    return sorted(table.to_pylist(), key=lambda r: r["source_offset"])


def _undecodable(pairs: Pairs) -> int:
    """Records the codec rejects (and keyless ones)."""
    bad = 0
    for key, value in pairs:
        try:
            decode(key, value) if key is not None else None
        except DecodeError:
            bad += 1
        bad += key is None
    return bad


def test_decode_batch_every_type_and_version_equals_codec_counts_undecodable() -> None:
    pairs: Pairs = [*raw_corpus(), (None, b"\x00\x03")]

    assert _decoded(pairs) == _expected(pairs)
    assert decode_batch(_batch(pairs))[1] == _undecodable(pairs) == 3  # truncated value, key; no key


def test_decode_batch_broker_written_commits_take_the_numpy_path_and_equal_codec() -> None:
    pairs = broker_commits(2000)
    batch = _batch(pairs)
    fast, _ = offset_records(Bytes(batch.column("key")), Bytes(batch.column("value")))

    assert fast.all()  # every one decoded in bulk, none by the codec
    assert _decoded(pairs) == _expected(pairs)
    kinds = {r["kind"] for r in _decoded(pairs)}
    assert kinds == {schema.COMMIT, schema.OFFSET_TOMBSTONE}


def test_decode_batch_topic_id_text_equals_kafka_uuid_text() -> None:
    key = e.offset_key("g", "t", 0)
    [row] = _decoded([(key, e.offset_value(4, 1, "", 2, topic_id=TOPIC_ID))])

    assert row["topic_id"] == "AAECAwQFBgcICQoLDA0ODw"  # Uuid.toString() of bytes 0..15


@pytest.mark.parametrize("seed", range(4))
def test_decode_batch_corrupted_records_equal_codec_never_raise_counted(seed: int) -> None:
    rng = random.Random(seed)
    pairs: Pairs = []
    for key, value in [*broker_commits(300, seed), *raw_corpus()]:
        key_b, value_b = bytearray(key or b""), None if value is None else bytearray(value)
        target = value_b if value_b and rng.random() < 0.7 else key_b
        mutation = rng.randrange(3)
        if mutation == 0 and target:
            del target[rng.randrange(len(target)) :]  # truncated
        elif mutation == 1 and target:
            target[rng.randrange(len(target))] = rng.randrange(256)  # a flipped byte
        else:
            target.extend(rng.randbytes(rng.randrange(1, 20)))  # trailing bytes
        pairs.append((bytes(key_b), None if value_b is None else bytes(value_b)))

    assert _decoded(pairs) == _expected(pairs)
    assert decode_batch(_batch(pairs))[1] == _undecodable(pairs) > 0


def test_decode_batch_sliced_arrow_batch_reads_its_own_rows() -> None:
    pairs = broker_commits(50)
    sliced = _batch(pairs).slice(20, 10)

    rows = sorted(decode_batch(sliced)[0].to_pylist(), key=lambda r: r["source_offset"])

    assert rows == _expected(pairs)[20:30]


def test_decode_batch_empty_batch() -> None:
    table, skipped = decode_batch(_batch([]))
    assert (table.num_rows, skipped) == (0, 0)


def test_decode_history_spark_equals_codec(spark: Any) -> None:
    pairs = [*broker_commits(500), *raw_corpus()]
    raw = spark.createDataFrame(
        [("c", 7, i, 1_700_000_000_000 + i, k, v) for i, (k, v) in enumerate(pairs)], schema.RAW_DDL
    )

    undecodable = spark.sparkContext.accumulator(0)

    got = sorted(
        (r.asDict() for r in decode_history(raw, undecodable).collect()), key=lambda r: r["source_offset"]
    )

    assert got == _expected(pairs)
    assert undecodable.value == _undecodable(pairs) > 0
