"""Strimzi's Kafka Exporter dashboard on offsetguard: a real Prometheus scrapes offsetguard serve (the
kafka_exporter families) and the 3-broker sandbox's JMX endpoints (the two min-ISR families, as in a
Strimzi deployment), every target labelled with a namespace and ``strimzi_io_cluster`` as Kubernetes
relabelling would. Every variable and panel query, substituted as Grafana would, returns data, and the
stat panels show what the cluster holds.

Scenario: ORDERS (3 partitions, RF 3, ``min.insync.replicas`` 3: every partition at min ISR) and AUDIT
(2 partitions, RF 3); partition 0 of ORDERS has its replicas reordered so that its leader is no longer the
preferred one, partition 1 too, followed by a preferred election that moves the leader there. GROUP
commits on both topics with lag; then more records arrive and GROUP commits further on ORDERS.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any, NamedTuple

import kafka.errors as kerr
import pytest
from kafka import KafkaAdminClient, KafkaProducer, TopicPartition

from sandbox.cluster import SandboxCluster
from tests.collectors.tail.sandbox_it import commit, retrying
from tests.deploy.prom import RulesPrometheus
from tests.service.metrics.integration.prometheus import ensure_prometheus, running_prometheus
from tests.support.daemons import offsetguard_serve

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

RUN = uuid.uuid4().hex[:8]
ORDERS = f"strimzi-orders-{RUN}"
AUDIT = f"strimzi-audit-{RUN}"
GROUP = f"strimzi-billing-{RUN}"
NAMESPACE = "kafka"  # the names of Strimzi's examples
STRIMZI_CLUSTER = "my-cluster"

# The dashboard's queries, read from Strimzi's examples/metrics/grafana-dashboards/strimzi-kafka-exporter.json
# at strimzi/strimzi-kafka-operator commit 8541da1e33 (the file is theirs and not in this repository).
VARIABLE_QUERIES = {
    "kubernetes_namespace": "query_result(kafka_broker_info)",
    "strimzi_cluster_name": 'query_result(kafka_broker_info{namespace="$kubernetes_namespace"})',
    "consumergroup": "label_values(kafka_consumergroup_current_offset{namespace="
    '"$kubernetes_namespace",strimzi_io_cluster="$strimzi_cluster_name"}, consumergroup)',
    "topic": "label_values(kafka_topic_partition_current_offset{namespace="
    '"$kubernetes_namespace",strimzi_io_cluster="$strimzi_cluster_name"}, topic)',
}
_T = 'topic=~"$topic", namespace=~"$kubernetes_namespace"'
_GT = 'consumergroup=~"$consumergroup",topic=~"$topic", namespace=~"$kubernetes_namespace"'
PANELS = [
    ("Topics", f"count(kafka_topic_partitions{{{_T}}})"),
    ("Partitions", f"sum(kafka_topic_partitions{{{_T}}})"),
    ("Replicas", 'sum(kafka_topic_partition_replicas{topic=~"$topic", namespace="$kubernetes_namespace"})'),
    ("In Sync Replicas", f"sum(kafka_topic_partition_in_sync_replica{{{_T}}})"),
    ("Under Replicated Partitions", f"sum(kafka_topic_partition_under_replicated_partition{{{_T}}})"),
    ("Partitions at minimum ISR", f"sum(kafka_cluster_partition_atminisr{{{_T}}})"),
    ("Partitions under minimum ISR", f"sum(kafka_cluster_partition_underminisr{{{_T}}})"),
    ("Partitions not on preferred node", f"sum(kafka_topic_partition_leader_is_preferred{{{_T}}} < bool 1)"),
    ("Messages in per second", f"sum(rate(kafka_topic_partition_current_offset{{{_T}}}[5m])) by (topic)"),
    (
        "Messages consumed per second",
        f"sum(delta(kafka_consumergroup_current_offset{{{_GT}}}[5m])/300) by (consumergroup, topic)",
    ),
    ("Lag by  Consumer Group", f"sum(kafka_consumergroup_lag{{{_GT}}}) by (consumergroup, topic) "),
    (
        "Consumer Group Offsets",
        f"sum(kafka_consumergroup_current_offset{{{_GT}}}) by (consumergroup,partition,topic)",
    ),
    ("Consumer Group Lag", f"sum(kafka_consumergroup_lag{{{_GT}}}) by (consumergroup,partition,topic)"),
    ("Number of Partitions", f"sum(kafka_topic_partitions{{{_T}}}) by (topic)"),
    ("Latest Offsets", f"sum(kafka_topic_partition_current_offset{{{_T}}}) by (partition,topic)"),
    ("Oldest Offsets", f"sum(kafka_topic_partition_oldest_offset{{{_T}}}) by (partition,topic)"),
]
# Records produced per partition in the two phases, and GROUP's commits after each.
PRODUCED = {(ORDERS, 0): (10, 10), (ORDERS, 1): (20, 10), (ORDERS, 2): (30, 10), (AUDIT, 0): (5, 10)}
PRODUCED |= {(AUDIT, 1): (5, 10)}
COMMITS = (
    {(ORDERS, 0): 4, (ORDERS, 1): 10, (ORDERS, 2): 30, (AUDIT, 0): 2},
    {(ORDERS, 0): 8, (ORDERS, 1): 10, (ORDERS, 2): 30, (AUDIT, 0): 2},
)
LOG_END = {tp: first + second for tp, (first, second) in PRODUCED.items()}


class Truth(NamedTuple):
    """What the cluster holds for ORDERS and AUDIT, read from its metadata."""

    partitions: dict[str, int]
    replicas: int
    in_sync: int
    not_preferred: int


class Rig(NamedTuple):
    prometheus: RulesPrometheus
    truth: Truth
    seconds: float  # from the first topic to every final value visible in Prometheus


def _produce(bootstrap: str, phase: int) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    try:
        for (topic, partition), counts in PRODUCED.items():
            for i in range(counts[phase]):
                producer.send(topic, value=f"p{phase}-{i}".encode(), partition=partition)
        producer.flush()
    finally:
        producer.close()


class Placement(NamedTuple):
    leader: int
    replicas: list[int]
    isr: list[int]


def _describe(admin: KafkaAdminClient) -> dict[tuple[str, int], Placement]:
    """Leader, replicas and ISR of every partition of ORDERS and AUDIT, as the Metadata API has them."""

    def once() -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = admin.describe_topics([ORDERS, AUDIT])
        if any(row["error_code"] for row in rows):
            raise kerr.KafkaError(f"topics not ready: {rows}")
        return rows

    return {
        (row["name"], p["partition_index"]): Placement(p["leader_id"], p["replica_nodes"], p["isr_nodes"])
        for row in retrying(once)
        for p in row["partitions"]
    }


def _move_preferred_replicas(admin: KafkaAdminClient) -> None:
    """ORDERS 0 and 1: the first two replicas swapped (the leader stays, no longer preferred); then a
    preferred election on 1 moves its leader to the new first replica."""
    before = _describe(admin)
    swapped = {p: [r[1], r[0], r[2]] for p in (0, 1) for r in [before[(ORDERS, p)].replicas]}
    result = admin.alter_partition_reassignments({TopicPartition(ORDERS, p): r for p, r in swapped.items()})
    assert all(error is None for error in result.values()), result
    deadline = time.monotonic() + 30
    while [_describe(admin)[(ORDERS, p)].replicas for p in (0, 1)] != list(swapped.values()):
        assert time.monotonic() < deadline, _describe(admin)
        time.sleep(0.2)
    admin.elect_leaders(0, {ORDERS: [1]})
    deadline = time.monotonic() + 30
    while _describe(admin)[(ORDERS, 1)].leader != swapped[1][0]:
        assert time.monotonic() < deadline, _describe(admin)
        time.sleep(0.2)


def _truth(admin: KafkaAdminClient) -> Truth:
    described = _describe(admin)
    partitions: dict[str, int] = {}
    for topic, _ in described:
        partitions[topic] = partitions.get(topic, 0) + 1
    return Truth(
        partitions,
        sum(len(p.replicas) for p in described.values()),
        sum(len(p.isr) for p in described.values()),
        sum(p.leader != p.replicas[0] for p in described.values()),
    )


def _job_target(url: str) -> str:
    return url.removeprefix("http://").removesuffix("/metrics")


@pytest.fixture(scope="module")
def rig(kafka3: SandboxCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    directory = tmp_path_factory.mktemp("strimzi-dashboard")
    start = time.monotonic()
    admin = KafkaAdminClient(bootstrap_servers=kafka3.bootstrap_servers)
    with ExitStack() as stack:
        stack.callback(admin.close)
        admin.create_topics(
            {
                ORDERS: {
                    "num_partitions": 3,
                    "replication_factor": 3,
                    "configs": {"min.insync.replicas": "3"},
                },
                AUDIT: {"num_partitions": 2, "replication_factor": 3},
            }
        )
        config: dict[str, object] = {
            "clusters": [
                {
                    "name": "sandbox",
                    "bootstrap_servers": kafka3.bootstrap_servers,
                    "metrics_urls": kafka3.metrics_urls,
                }
            ],
            "intervals": {"metadata": 1, "offsets": 1, "groups": 1, "committed": 1, "configs": 30},
            "store": {"path": str(directory / "og.db")},
            "metrics": {"families": ["offsetguard", "kafka_exporter"]},
        }
        served = stack.enter_context(offsetguard_serve(config, directory))
        prometheus = stack.enter_context(
            running_prometheus(
                ensure_prometheus(),
                directory / "prometheus",
                served.removeprefix("http://"),
                # Strimzi's PodMonitors scrape the brokers (and controllers) and the exporter alike
                more_jobs={"kafka": [_job_target(url) for url in kafka3.metrics_urls]},
                labels={"namespace": NAMESPACE, "strimzi_io_cluster": STRIMZI_CLUSTER},
                handle=RulesPrometheus,
            )
        )
        _produce(kafka3.bootstrap_servers, 0)
        commit(admin, GROUP, COMMITS[0])
        _move_preferred_replicas(admin)
        prometheus.wait_value(
            f'kafka_consumergroup_current_offset{{consumergroup="{GROUP}",partition="0"}} == 4'
        )
        _produce(kafka3.bootstrap_servers, 1)
        commit(admin, GROUP, COMMITS[1])
        truth = _truth(admin)
        for query, value in (
            (
                f'kafka_consumergroup_current_offset{{consumergroup="{GROUP}",topic="{ORDERS}",partition="0"}}',
                8,
            ),
            (
                f'sum(kafka_topic_partition_current_offset{{topic=~"{ORDERS}|{AUDIT}"}})',
                sum(LOG_END.values()),
            ),
            (f'sum(kafka_topic_partition_leader_is_preferred{{topic="{ORDERS}"}})', 2),
            (f'sum(kafka_cluster_partition_atminisr{{topic="{ORDERS}"}})', 3),
        ):
            prometheus.wait_value(f"{query} == {value}", timeout=30)
        yield Rig(prometheus, truth, time.monotonic() - start)


def _substitute(expr: str, values: dict[str, str]) -> str:
    for name in sorted(values, key=len, reverse=True):
        expr = expr.replace(f"${name}", values[name])
    assert "$" not in expr, expr
    return expr


PICKED = {  # a user's choice in the selectors: Grafana writes a multi-value choice as a regex group
    "kubernetes_namespace": NAMESPACE,
    "strimzi_cluster_name": STRIMZI_CLUSTER,
    "consumergroup": f"({GROUP})",
    "topic": f"({ORDERS}|{AUDIT})",
}
ALL = {**PICKED, "consumergroup": ".*", "topic": ".*"}  # "All" (the topic selector's own all-value)


def _series(rig: Rig, title: str, values: dict[str, str]) -> dict[frozenset[tuple[str, str]], float]:
    expr = _substitute(dict(PANELS)[title], values)
    return {frozenset(r["metric"].items()): float(r["value"][1]) for r in rig.prometheus.query(expr)}


def _one(rig: Rig, title: str) -> float:
    ((_, value),) = _series(rig, title, PICKED).items()
    return value


def _key(**labels: str | int) -> frozenset[tuple[str, str]]:
    return frozenset((k, str(v)) for k, v in labels.items())


def test_strimzi_dashboard_variables_list_namespace_cluster_group_and_topics(rig: Rig) -> None:
    prom = rig.prometheus
    brokers = prom.query(VARIABLE_QUERIES["kubernetes_namespace"].removeprefix("query_result"))
    assert {r["metric"]["namespace"] for r in brokers} == {NAMESPACE}
    assert sorted(r["metric"]["id"] for r in brokers) == ["1", "2", "3"]
    by_namespace = _substitute(VARIABLE_QUERIES["strimzi_cluster_name"].removeprefix("query_result"), PICKED)
    assert {r["metric"]["strimzi_io_cluster"] for r in prom.query(by_namespace)} == {STRIMZI_CLUSTER}
    for variable, wanted in (("consumergroup", {GROUP}), ("topic", {ORDERS, AUDIT})):
        inner = _substitute(VARIABLE_QUERIES[variable], PICKED).removeprefix("label_values(")
        selector, label = inner.removesuffix(")").rsplit(", ", 1)
        assert wanted <= set(prom.label_values(label, selector))


@pytest.mark.parametrize("values", [PICKED, ALL], ids=["picked", "all"])
def test_strimzi_dashboard_every_panel_has_data(rig: Rig, values: dict[str, str]) -> None:
    empty = [title for title, _ in PANELS if not _series(rig, title, values)]
    assert not empty


def test_strimzi_dashboard_stats_are_what_the_cluster_holds(rig: Rig) -> None:
    truth = rig.truth
    # the scenario as built, read back from the cluster
    assert (truth.partitions, truth.replicas, truth.in_sync, truth.not_preferred) == (
        {ORDERS: 3, AUDIT: 2},
        15,
        15,
        1,
    )
    assert {title: _one(rig, title) for title, _ in PANELS[:8]} == {
        "Topics": len(truth.partitions),
        "Partitions": sum(truth.partitions.values()),
        "Replicas": truth.replicas,
        "In Sync Replicas": truth.in_sync,
        "Under Replicated Partitions": truth.replicas - truth.in_sync,
        "Partitions at minimum ISR": truth.partitions[ORDERS],  # ISR 3 = min.insync.replicas 3
        "Partitions under minimum ISR": 0,
        "Partitions not on preferred node": truth.not_preferred,
    }


def test_strimzi_dashboard_tables_exact_offsets_lag_and_partitions(rig: Rig) -> None:
    committed = COMMITS[1]
    assert _series(rig, "Consumer Group Offsets", PICKED) == {
        _key(consumergroup=GROUP, topic=t, partition=p): o for (t, p), o in committed.items()
    }
    assert _series(rig, "Consumer Group Lag", PICKED) == {
        _key(consumergroup=GROUP, topic=t, partition=p): LOG_END[(t, p)] - o
        for (t, p), o in committed.items()
    }
    assert _series(rig, "Number of Partitions", PICKED) == {_key(topic=ORDERS): 3, _key(topic=AUDIT): 2}
    assert _series(rig, "Latest Offsets", PICKED) == {
        _key(topic=t, partition=p): e for (t, p), e in LOG_END.items()
    }
    assert _series(rig, "Oldest Offsets", PICKED) == {_key(topic=t, partition=p): 0 for t, p in LOG_END}


def test_strimzi_dashboard_time_series_rates_and_lag(rig: Rig) -> None:
    produced = _series(rig, "Messages in per second", PICKED)
    assert set(produced) == {_key(topic=ORDERS), _key(topic=AUDIT)}
    assert all(rate > 0 for rate in produced.values())
    consumed = _series(rig, "Messages consumed per second", PICKED)
    assert consumed[_key(consumergroup=GROUP, topic=ORDERS)] > 0  # committed 4 -> 8 on partition 0
    assert consumed[_key(consumergroup=GROUP, topic=AUDIT)] == 0
    lag = {k: sum(LOG_END[(t, p)] - o for (t, p), o in COMMITS[1].items() if t == k) for k in (ORDERS, AUDIT)}
    assert _series(rig, "Lag by  Consumer Group", PICKED) == {
        _key(consumergroup=GROUP, topic=t): v for t, v in lag.items()
    }
