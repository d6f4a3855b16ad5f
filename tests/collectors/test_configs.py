"""ConfigsCollector over a fake seam: parsing, defaults with sources, and failures."""

from __future__ import annotations

import pytest

from collectors.configs import BROKER_KEYS, TOPIC_KEYS, ConfigsCollector, topic_config
from collectors.errors import KafkaResponseError
from collectors.model import TopicConfig
from collectors.seam import ConfigValue
from tests.collectors.fakes import CLUSTER, FakeSeam, metadata, partition, source

META = metadata(
    [1, 2],
    {"orders": [partition("orders", 0, 1, replicas=(1, 2))], "gone": [partition("gone", 0, 2)]},
)
DEFAULT, TOPIC, STATIC = "DEFAULT_CONFIG", "DYNAMIC_TOPIC_CONFIG", "STATIC_BROKER_CONFIG"
ORDERS = {
    "retention.ms": ConfigValue("3600000", TOPIC),
    "retention.bytes": ConfigValue("-1", DEFAULT),
    "cleanup.policy": ConfigValue("compact,delete", TOPIC),
    "unclean.leader.election.enable": ConfigValue("true", TOPIC),
    "min.insync.replicas": ConfigValue("2", STATIC),
    "segment.ms": ConfigValue("604800000", DEFAULT),
}
BROKER = {
    "offsets.retention.minutes": ConfigValue("10080", DEFAULT),
    "log.retention.ms": ConfigValue(None, DEFAULT),
    "unclean.leader.election.enable": ConfigValue("false", DEFAULT),
}


async def test_configs_values_parsed_with_sources_and_replication_factor() -> None:
    missing = KafkaResponseError(
        "broker answered UNKNOWN_TOPIC_OR_PARTITION", error_code=3, error_name="UNKNOWN_TOPIC_OR_PARTITION"
    )
    seam = FakeSeam(topic_configs={"orders": ORDERS, "gone": missing}, broker_configs={1: BROKER})

    observed = await ConfigsCollector(seam, CLUSTER, source(META), clock=lambda: 8.0).collect()

    assert observed.topics == (
        TopicConfig(
            topic="orders",
            retention_ms=3_600_000,
            retention_bytes=None,
            cleanup_policy=("compact", "delete"),
            unclean_leader_election_enable=True,
            min_insync_replicas=2,
            replication_factor=2,
            segment_ms=604_800_000,
            sources=tuple(sorted((k, v.source) for k, v in ORDERS.items())),
        ),
    )
    assert [(f.scope, f.key, f.error) for f in observed.failures] == [("topic", "gone", "KafkaResponseError")]
    assert observed.broker == (
        ("offsets.retention.minutes", "10080"),
        ("unclean.leader.election.enable", "false"),
    )
    assert observed.broker_id == 1
    assert ("describe_topic_configs", ("gone", "orders"), TOPIC_KEYS) in seam.calls


async def test_configs_first_broker_down_next_broker_answers() -> None:
    seam = FakeSeam(topic_configs={"orders": ORDERS}, broker_configs={2: BROKER}, down={1})

    observed = await ConfigsCollector(seam, CLUSTER, source(META)).collect()

    assert observed.broker_id == 2
    assert ("describe_broker_configs", 2, BROKER_KEYS) in seam.calls
    assert {f.key for f in observed.failures} == {"gone"}  # broker 1 is not a failure: 2 answered


async def test_configs_every_broker_down_broker_failures_listed() -> None:
    seam = FakeSeam(topic_configs={"orders": ORDERS}, down={1, 2})

    observed = await ConfigsCollector(seam, CLUSTER, source(META)).collect()

    assert observed.broker == () and observed.broker_id is None
    assert {(f.scope, f.key) for f in observed.failures} >= {("broker", "1"), ("broker", "2")}


def test_topic_config_missing_key_raises_value_error() -> None:
    info = META.topics[1]
    values = {k: v for k, v in ORDERS.items() if k != "min.insync.replicas"}

    with pytest.raises(ValueError, match=r"min\.insync\.replicas"):
        topic_config(info, values)
