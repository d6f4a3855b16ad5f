"""The sandbox's JMX exporter rules expose every family offsetguard reads, and the counters move."""

from __future__ import annotations

import asyncio
import time

import pytest
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

from collectors.broker_metrics import FAMILIES, UNCLEAN_ELECTIONS, BrokerMetricsCollector
from collectors.model import MetricsObservation
from sandbox.cluster import SandboxCluster

pytestmark = pytest.mark.integration

BROKERS = (1, 2, 3)
CONTROLLER_FAMILIES = {f for f in FAMILIES if f.startswith("kafka_controller_")}


def _families(observation: MetricsObservation) -> dict[int | None, set[str]]:
    return {b.broker_id: {s.name.removesuffix("_total") for s in b.samples} for b in observation.brokers}


async def test_broker_metrics_kafka3_every_family_scraped(kafka3: SandboxCluster) -> None:
    # Fetch error meters exist only once a fetch happened: replicate a topic across all three brokers.
    _create_topic(kafka3, NewTopic("sandbox-metrics-probe", num_partitions=3, replication_factor=3))
    _produce(kafka3, "sandbox-metrics-probe", 3, "all")
    collector = BrokerMetricsCollector("sandbox", kafka3.metrics_urls)
    broker_families = FAMILIES - CONTROLLER_FAMILIES

    deadline = time.monotonic() + 30  # replica fetchers start a moment after the topic exists
    observation = await collector.collect()
    by_node = _families(observation)
    while time.monotonic() < deadline and not all(by_node.get(b, set()) >= broker_families for b in BROKERS):
        await asyncio.sleep(0.5)
        observation = await collector.collect()
        by_node = _families(observation)

    assert observation.failures == ()
    assert set(by_node) == {1, 2, 3, 100}
    assert set().union(*by_node.values()) == FAMILIES
    assert by_node[100] >= CONTROLLER_FAMILIES
    for broker_id in (1, 2, 3):
        assert by_node[broker_id] >= broker_families


def _unclean_elections(cluster: SandboxCluster) -> float:
    collector = BrokerMetricsCollector("sandbox", [cluster.controller.metrics_url])
    (controller,) = asyncio.run(collector.collect()).brokers
    value = controller.value(UNCLEAN_ELECTIONS)
    assert value is not None
    return value


def _create_topic(cluster: SandboxCluster, topic: NewTopic) -> None:
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        admin.create_topics([topic])
    finally:
        admin.close()


def _produce(cluster: SandboxCluster, topic: str, count: int, acks: int | str) -> None:
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks=acks)
    try:
        for i in range(count):
            producer.send(topic, b"m%d" % i)
        producer.flush(timeout=30)
    finally:
        producer.close()


def test_forced_unclean_election_kafka3_moves_controller_counter(kafka3: SandboxCluster) -> None:
    topic = "sandbox-unclean-election"
    _create_topic(kafka3, NewTopic(topic, replica_assignments={0: [1, 2]}))
    before = _unclean_elections(kafka3)
    try:
        _produce(kafka3, topic, 100, "all")
        kafka3.stop_broker(2)  # controlled shutdown: ISR shrinks to [1]
        _produce(kafka3, topic, 50, 1)
        kafka3.stop_broker(1)  # last ISR member gone: partition offline
        kafka3.start_broker(2)  # out-of-sync replica back, not eligible for a clean election

        done = kafka3.run_tool(
            "org.apache.kafka.tools.LeaderElectionCommand",
            "--bootstrap-server",
            kafka3.bootstrap_servers,
            "--election-type",
            "unclean",
            "--topic",
            topic,
            "--partition",
            "0",
        )
        assert done.returncode == 0, done.stdout + done.stderr

        deadline = time.monotonic() + 20
        after = _unclean_elections(kafka3)
        while after <= before and time.monotonic() < deadline:
            time.sleep(0.5)
            after = _unclean_elections(kafka3)
        assert after == before + 1
    finally:
        for broker_id in (1, 2):
            if not kafka3.brokers[broker_id].alive():
                kafka3.start_broker(broker_id)
