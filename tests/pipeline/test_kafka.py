"""On the real sandbox: Spark's decoder equals the Python codec record for record on a golden corpus,
and Spark's Kafka source returns every record of __consumer_offsets the Python raw reader saw.

The corpus is the codec golden suite's workloads (classic commits with 0–300-byte metadata,
transactional commits, a KIP-848 group with a classic member, OffsetDelete, DeleteGroups), run once.
"""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.testing import assertDataFrameEqual

from collectors.codec import decode
from collectors.errors import DecodeError
from collectors.kafka.offsets_topic import OffsetsTopicSnapshot, read_offsets_topic
from pipeline import schema
from pipeline.arrow_decode import decode_history
from pipeline.records import RECORDS_DDL, decode_records, record_row
from pipeline.sources import read_kafka
from sandbox.cluster import SandboxCluster
from tests.collectors.codec.golden import workloads

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def corpus(kafka1: SandboxCluster) -> OffsetsTopicSnapshot:
    workloads.run_all(kafka1)
    return read_offsets_topic(kafka1.bootstrap_servers)


def _raw(spark: Any, snap: OffsetsTopicSnapshot) -> Any:
    rows = [("sandbox", r.partition, r.offset, r.timestamp, r.key, r.value) for r in snap.records]
    return spark.createDataFrame(rows, schema.RAW_DDL)


def _expected(snap: OffsetsTopicSnapshot) -> list[dict[str, Any]]:
    out = []
    for r in snap.records:
        try:
            record = decode(r.key, r.value) if r.key is not None else None
        except DecodeError:
            record = None
        out.append(record_row(record, r.partition, r.offset))
    return out


def test_decode_records_golden_corpus_equals_python_codec(spark: Any, corpus: OffsetsTopicSnapshot) -> None:
    kinds = {type(decode(r.key, r.value)).__name__ for r in corpus.records if r.key is not None}
    assert {"OffsetCommit", "OffsetCommitTombstone", "GroupMetadata", "GroupTombstone"} <= kinds
    assert any(k.startswith("ConsumerGroup") for k in kinds)

    got = decode_records(_raw(spark, corpus))

    assertDataFrameEqual(got, spark.createDataFrame(_expected(corpus), RECORDS_DDL))


def test_decode_history_golden_corpus_commits_equal_python_codec(
    spark: Any, corpus: OffsetsTopicSnapshot
) -> None:
    got = decode_history(_raw(spark, corpus)).where("kind in ('commit', 'offset_tombstone')")
    want = [
        {
            k: row[k]
            for k in (
                "source_partition",
                "source_offset",
                "group",
                "topic",
                "partition",
                "offset",
                "leader_epoch",
                "metadata",
                "commit_timestamp",
                "expire_timestamp",
                "topic_id",
            )
        }
        for row in _expected(corpus)
        if row["type"] in ("OffsetCommit", "OffsetCommitTombstone")
    ]
    assert len(want) > 10
    cols = list(want[0])
    assertDataFrameEqual(got.select(*cols), spark.createDataFrame(want, got.select(*cols).schema))


def test_read_kafka_sandbox_returns_every_record_of_python_reader(
    spark: Any, kafka1: SandboxCluster, corpus: OffsetsTopicSnapshot
) -> None:
    got = read_kafka(spark, kafka1.bootstrap_servers, cluster="sandbox")
    # Spark reads up to the end offsets when it plans the read: a superset of the earlier Python read.
    seen = got.join(
        _raw(spark, corpus).select("source_partition", "source_offset"), ["source_partition", "source_offset"]
    )

    assertDataFrameEqual(seen.select(*schema.HISTORY_COLUMNS[:4], "key", "value"), _raw(spark, corpus))


def test_read_kafka_without_deprecated_offset_fetching_returns_nothing(
    spark: Any, kafka1: SandboxCluster, corpus: OffsetsTopicSnapshot
) -> None:
    key = "spark.sql.streaming.kafka.useDeprecatedOffsetFetching"
    spark.conf.set(key, "false")
    try:
        count = read_kafka(spark, kafka1.bootstrap_servers, cluster="sandbox").count()
    finally:
        spark.conf.set(key, "true")

    assert corpus.records and count == 0  # why pipeline.session sets it: internal topics vanish silently
