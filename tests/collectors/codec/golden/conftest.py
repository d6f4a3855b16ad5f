"""Fixtures of the golden suite: a dedicated sandbox whose offsets expire after one minute.

kafka1/kafka3 keep Kafka's default retention; expiry needs ``offsets.retention.minutes=1`` and a
fast expiry check, so it gets its own single-node sandbox, started only by the test that asks for it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sandbox.cluster import SandboxCluster, start_sandbox


@pytest.fixture(scope="session")
def kafka_expiry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxCluster]:
    """One broker+controller node with offsets.retention.minutes=1, checked every second."""
    cluster = start_sandbox(
        tmp_path_factory.mktemp("kafka-expiry"),
        brokers=1,
        broker_properties={"offsets.retention.minutes": 1, "offsets.retention.check.interval.ms": 1000},
    )
    try:
        yield cluster
    finally:
        cluster.kill()  # throwaway: no controlled shutdown
