"""The one SparkSession of the test session (local[2], 2 shuffle partitions, no UI), shared by every
pipeline test; Spark-side tests are skipped when pyspark is not installed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from pipeline.session import build_session, ensure_kafka_jars

    session = build_session(
        master="local[2]",
        app_name="offsetguard-tests",
        shuffle_partitions=2,
        ui=False,
        kafka_jars=ensure_kafka_jars(),
        conf={"spark.driver.memory": "1g", "spark.default.parallelism": "2"},
    )
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
