"""A real Prometheus scrapes a real offsetguard watching the 1-node sandbox; PromQL sees the known lag."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import CoordinatorNotAvailableError
from kafka.structs import OffsetAndMetadata

from sandbox.cluster import SandboxCluster
from tests.service.metrics.integration.prometheus import (
    ensure_prometheus,
    running_prometheus,
)
from tests.support.daemons import offsetguard_serve

pytestmark = pytest.mark.integration

TOPIC = "metrics-e2e-orders"
GROUP = "metrics-e2e-billing"


@pytest.fixture(scope="module")
def lagging_group(kafka1: SandboxCluster) -> None:
    """TOPIC partition 0 holds 10 records; GROUP committed 4 there (lag 6) and 10 on partition 1 (lag 0)."""
    admin = KafkaAdminClient(bootstrap_servers=kafka1.bootstrap_servers)
    try:
        admin.create_topics([NewTopic(TOPIC, 2, 1)])
        producer = KafkaProducer(bootstrap_servers=kafka1.bootstrap_servers)
        for partition in (0, 1):
            for i in range(10):
                producer.send(TOPIC, value=f"m{i}".encode(), partition=partition)
        producer.flush()
        producer.close()
        offsets = {
            TopicPartition(TOPIC, 0): OffsetAndMetadata(4, "", -1),
            TopicPartition(TOPIC, 1): OffsetAndMetadata(10, "", -1),
        }
        deadline = time.monotonic() + 30
        while True:
            try:
                admin.alter_group_offsets(GROUP, offsets)
                break
            except CoordinatorNotAvailableError:  # __consumer_offsets is created on first use
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
    finally:
        admin.close()


@pytest.fixture
def offsetguard(kafka1: SandboxCluster, lagging_group: None, tmp_path: Path) -> Iterator[str]:
    """``offsetguard serve`` (a subprocess) watching the sandbox; yields its host:port."""
    cluster = {
        "name": "sandbox",
        "bootstrap_servers": kafka1.bootstrap_servers,
        "metrics_urls": kafka1.metrics_urls,
    }
    config = {
        "clusters": [cluster],
        "intervals": {"metadata": 1, "offsets": 1, "groups": 1, "committed": 1, "configs": 30},
        "store": {"path": str(tmp_path / "og.db")},
        # the compatible sets are opt-in; this test checks all three as Prometheus reads them
        "metrics": {"families": ["offsetguard", "kafka_exporter", "kafka_lag_exporter"]},
    }
    with offsetguard_serve(config, tmp_path) as url:
        yield url.removeprefix("http://")


def test_prometheus_scrapes_offsetguard_kafka_exporter_lag_exact(offsetguard: str, tmp_path: Path) -> None:
    binary = ensure_prometheus()
    assert Path(binary).exists()
    with running_prometheus(binary, tmp_path, offsetguard) as prom:
        assert prom.wait_value('up{job="offsetguard"} == 1') == 1
        lag = f'kafka_consumergroup_lag{{consumergroup="{GROUP}",topic="{TOPIC}",partition="0"}}'
        assert prom.wait_value(lag) == 6
        assert (
            prom.wait_value(
                f'kafka_consumergroup_lag{{consumergroup="{GROUP}",topic="{TOPIC}",partition="1"}}'
            )
            == 0
        )
        assert prom.wait_value(f'kafka_consumergroup_lag_sum{{consumergroup="{GROUP}",topic="{TOPIC}"}}') == 6
        assert (
            prom.wait_value(
                f'kafka_consumergroup_current_offset{{consumergroup="{GROUP}",topic="{TOPIC}",partition="0"}}'
            )
            == 4
        )
        assert prom.wait_value(f'kafka_topic_partition_current_offset{{topic="{TOPIC}",partition="0"}}') == 10
        assert (
            prom.wait_value(f'kafka_consumergroup_group_lag{{group="{GROUP}",topic="{TOPIC}",partition="0"}}')
            == 6
        )
        assert (
            prom.wait_value(
                f'offsetguard_group_lag_messages{{group="{GROUP}",topic="{TOPIC}",partition="0"}}'
            )
            == 6
        )
        # the log end passed offset 4 before offsetguard's first look, so the age is a (small) lower bound
        seconds = prom.wait_value(
            f'offsetguard_group_lag_seconds{{group="{GROUP}",topic="{TOPIC}",partition="0"}}'
        )
        assert 0 <= seconds < 300
