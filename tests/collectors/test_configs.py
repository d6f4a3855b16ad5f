"""ConfigsCollector over a fake seam: parsing, defaults with sources, and failures."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from collectors.configs import BROKER_KEYS, TOPIC_KEYS, ConfigsCollector, topic_config
from collectors.errors import KafkaError, KafkaResponseError, KafkaUnavailableError
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


DELETED = KafkaResponseError(
    "broker answered UNKNOWN_TOPIC_OR_PARTITION", error_code=3, error_name="UNKNOWN_TOPIC_OR_PARTITION"
)
REFUSED = KafkaResponseError("broker answered POLICY_VIOLATION", error_code=44, error_name="POLICY_VIOLATION")


async def test_configs_values_parsed_with_sources_and_replication_factor() -> None:
    seam = FakeSeam(topic_configs={"orders": ORDERS, "gone": REFUSED}, broker_configs={1: BROKER})

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


async def test_configs_topic_deleted_since_the_metadata_is_not_a_failure() -> None:
    """The 5-minute configs run kept a deleted topic's failure, so the cluster looked degraded for 5 min and
    a broker rolling restart meanwhile paged collector_failure (the 60-minute soak)."""
    seam = FakeSeam(topic_configs={"orders": ORDERS, "gone": DELETED}, broker_configs={1: BROKER})

    observed = await ConfigsCollector(seam, CLUSTER, source(META)).collect()

    assert [c.topic for c in observed.topics] == ["orders"]
    assert observed.failures == ()


class RestartingBroker(FakeSeam):
    """The broker asked first is restarting: its topics are unreachable once, then another answers."""

    def __init__(self, *, whole_request: bool, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.whole_request, self.first = whole_request, True

    def describe_topic_configs(
        self, topics: Sequence[str], keys: Sequence[str]
    ) -> dict[str, dict[str, ConfigValue] | KafkaError]:
        if self.first:
            self.first = False
            down = KafkaUnavailableError("broker 1 restarting")
            if self.whole_request:
                self.calls.append(("describe_topic_configs", tuple(topics), tuple(keys)))
                raise down
            return {**super().describe_topic_configs(topics, keys), "orders": down}
        return super().describe_topic_configs(topics, keys)


@pytest.mark.parametrize("whole_request", [True, False])
async def test_configs_unreachable_broker_asked_again_once(whole_request: bool) -> None:
    seam = RestartingBroker(whole_request=whole_request, topic_configs={"orders": ORDERS, "gone": DELETED})

    observed = await ConfigsCollector(seam, CLUSTER, source(META)).collect()

    assert [c.topic for c in observed.topics] == ["orders"] and observed.failures == ()
    asked = [c[1] for c in seam.calls if c[0] == "describe_topic_configs"]
    assert asked == [("gone", "orders"), ("gone", "orders") if whole_request else ("orders",)]


async def test_configs_still_unreachable_after_asking_again_is_a_failure() -> None:
    down = KafkaUnavailableError("every broker down")
    seam = FakeSeam(topic_configs={"orders": down, "gone": DELETED}, broker_configs={1: BROKER})

    observed = await ConfigsCollector(seam, CLUSTER, source(META)).collect()

    assert [(f.key, f.error) for f in observed.failures] == [("orders", "KafkaUnavailableError")]
    assert len([c for c in seam.calls if c[0] == "describe_topic_configs"]) == 2


def test_topic_config_missing_key_raises_value_error() -> None:
    info = META.topics[1]
    values = {k: v for k, v in ORDERS.items() if k != "min.insync.replicas"}

    with pytest.raises(ValueError, match=r"min\.insync\.replicas"):
        topic_config(info, values)


async def test_configs_of_topics_out_of_scope_never_asked_through_the_scoped_metadata() -> None:
    from collectors.metadata import MetadataCollector
    from collectors.scope import Scope
    from collectors.settings import NameFilter
    from tests.collectors.fakes import snapshot

    meta = snapshot([1], {"orders": [partition("orders", 0, 1)], "gone": [partition("gone", 0, 1)]})
    seam = FakeSeam(meta=meta, topic_configs={"orders": ORDERS, "gone": ORDERS}, broker_configs={1: BROKER})
    scope = Scope.from_patterns(topics=NameFilter(include=["orders"]))
    metadata_collector = MetadataCollector(seam, CLUSTER, scope=scope)

    observed = await ConfigsCollector(seam, CLUSTER, metadata_collector.latest, scope=scope).collect()

    assert [t.topic for t in observed.topics] == ["orders"]
    asked = [c[1] for c in seam.calls if c[0] == "describe_topic_configs"]
    assert asked == [("orders",)]
