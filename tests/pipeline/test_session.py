"""pipeline.session: the defaults every job session gets."""

from __future__ import annotations

from typing import Any

from pipeline.session import SPLITS_PER_CORE, build_session


def test_session_defaults_utc_internal_topics_readable_and_splits_per_core(spark: Any) -> None:
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    assert spark.conf.get("spark.sql.streaming.kafka.useDeprecatedOffsetFetching") == "true"
    cores = spark.sparkContext.defaultParallelism
    assert spark.conf.get("spark.sql.files.minPartitionNum") == str(SPLITS_PER_CORE * cores) == "8"


def test_session_keeps_a_split_count_the_user_chose(spark: Any) -> None:
    chosen = spark.conf.get("spark.sql.files.minPartitionNum")
    try:
        same = build_session(conf={"spark.sql.files.minPartitionNum": "3"})
        assert same is spark  # one session per JVM: the builder sets its SQL options on it
        assert spark.conf.get("spark.sql.files.minPartitionNum") == "3"
    finally:
        spark.conf.set("spark.sql.files.minPartitionNum", chosen)
