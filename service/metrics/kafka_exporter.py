"""Families named and labelled as danielqsj/kafka_exporter's, so its dashboards and rules work unchanged.

Differences, all deliberate: every series carries an extra ``cluster`` label (what kafka_exporter gives
with ``--kafka.labels=cluster=<name>``; without it two clusters would clash); a partition without a
committed offset has *no* ``kafka_consumergroup_current_offset``/``_lag`` series instead of ``-1``; a lag
whose partition range is unknown is absent instead of skipped with a log line. Negative lag (committed
beyond the log end) is kept, as kafka_exporter does.

Names and label sets are kafka_exporter's, so a coarser granularity cannot relabel a family: at ``topic``
and ``group`` the per-partition families (:data:`PER_PARTITION`) are left out and kafka_exporter's own
aggregates stay (``kafka_consumergroup_current_offset_sum`` and ``_lag_sum`` per group and topic: it has
nothing coarser, so they stay at ``group`` too), with the broker, topic and member counts.

``kafka_exporter_build_info`` says which build answers, as kafka_exporter's (Go) version collector does:
one series per process, without ``cluster``, labelled with offsetguard's version and the platform in Go's
spelling; the Go-only labels (revision, branch, goversion, tags) are ``unknown``.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Iterator
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import NamedTuple

from prometheus_client.core import GaugeMetricFamily, Metric

from service.metrics.fast import FastGauge
from service.metrics.options import Granularity
from service.metrics.view import ClusterView

TP = ["cluster", "topic", "partition"]
GTP = ["cluster", "consumergroup", "topic", "partition"]
GT = ["cluster", "consumergroup", "topic"]


class _Families(NamedTuple):
    brokers: GaugeMetricFamily
    broker_info: GaugeMetricFamily
    partitions: GaugeMetricFamily
    current: GaugeMetricFamily
    oldest: GaugeMetricFamily
    leader: GaugeMetricFamily
    preferred: GaugeMetricFamily
    replicas: GaugeMetricFamily
    isr: GaugeMetricFamily
    under: GaugeMetricFamily
    group_offset: GaugeMetricFamily
    group_offset_sum: GaugeMetricFamily
    group_lag: GaugeMetricFamily
    group_lag_sum: GaugeMetricFamily
    members: GaugeMetricFamily


def _families() -> _Families:
    g = FastGauge
    return _Families(
        g("kafka_brokers", "Number of Brokers in the Kafka Cluster.", labels=["cluster"]),
        g("kafka_broker_info", "Information about the Kafka Broker.", labels=["cluster", "id", "address"]),
        g("kafka_topic_partitions", "Number of partitions for this Topic", labels=["cluster", "topic"]),
        g("kafka_topic_partition_current_offset", "Current Offset of a Broker at Topic/Partition", labels=TP),
        g("kafka_topic_partition_oldest_offset", "Oldest Offset of a Broker at Topic/Partition", labels=TP),
        g("kafka_topic_partition_leader", "Leader Broker ID of this Topic/Partition", labels=TP),
        g(
            "kafka_topic_partition_leader_is_preferred",
            "1 if Topic/Partition is using the Preferred Broker",
            labels=TP,
        ),
        g("kafka_topic_partition_replicas", "Number of Replicas for this Topic/Partition", labels=TP),
        g(
            "kafka_topic_partition_in_sync_replica",
            "Number of In-Sync Replicas for this Topic/Partition",
            labels=TP,
        ),
        g(
            "kafka_topic_partition_under_replicated_partition",
            "1 if Topic/Partition is under Replicated",
            labels=TP,
        ),
        g(
            "kafka_consumergroup_current_offset",
            "Current Offset of a ConsumerGroup at Topic/Partition",
            labels=GTP,
        ),
        g(
            "kafka_consumergroup_current_offset_sum",
            "Current Offset of a ConsumerGroup at Topic for all partitions",
            labels=GT,
        ),
        g(
            "kafka_consumergroup_lag",
            "Current Approximate Lag of a ConsumerGroup at Topic/Partition",
            labels=GTP,
        ),
        g(
            "kafka_consumergroup_lag_sum",
            "Current Approximate Lag of a ConsumerGroup at Topic for all partitions",
            labels=GT,
        ),
        g(
            "kafka_consumergroup_members",
            "Amount of members in a consumer group",
            labels=["cluster", "consumergroup"],
        ),
    )


# Families with a series per partition or per group-partition: exposed at partition granularity only.
PER_PARTITION = frozenset(
    {"current", "oldest", "leader", "preferred", "replicas", "isr", "under", "group_offset", "group_lag"}
)
# Go's names for the machines Python reports (platform.machine()); others are passed through lower-cased.
_GOARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "i686": "386"}


@cache
def _build_labels() -> tuple[tuple[str, str], ...]:
    try:
        own = version("offsetguard")
    except PackageNotFoundError:  # run from a source tree that was never installed
        own = "unknown"
    machine = platform.machine().lower()
    return (
        ("version", own),
        ("revision", "unknown"),
        ("branch", "unknown"),
        ("goversion", "unknown"),
        ("goos", "windows" if sys.platform == "win32" else sys.platform),  # "linux", "darwin"
        ("goarch", _GOARCH.get(machine, machine)),
        ("tags", "unknown"),
    )


def build_info() -> GaugeMetricFamily:
    """``kafka_exporter_build_info``: one series, value 1 (see the module docstring for its labels)."""
    labels = _build_labels()
    family = GaugeMetricFamily(
        "kafka_exporter_build_info",
        "A metric with a constant '1' value labeled by version, revision, branch, goversion from which "
        "kafka_exporter was built, and the goos and goarch for the build.",
        labels=[name for name, _ in labels],
    )
    family.add_metric([value for _, value in labels], 1)
    return family


def kafka_exporter_families(
    views: list[ClusterView], granularity: Granularity = "partition"
) -> Iterator[Metric]:
    """Every kafka_exporter-compatible family over ``views`` (families with no sample included); at a
    coarser granularity, all but the :data:`PER_PARTITION` ones."""
    f = _families()
    per_partition = granularity == "partition"
    for view in views:
        _topics(f, view, per_partition)
        _groups(f, view, per_partition)
    yield build_info()
    if per_partition:
        yield from f
    else:
        yield from (family for name, family in zip(f._fields, f, strict=True) if name not in PER_PARTITION)


def _topics(f: _Families, view: ClusterView, per_partition: bool) -> None:
    c = view.cluster
    if view.metadata is not None:
        f.brokers.add_metric([c], len(view.metadata.brokers))
        for b in view.metadata.brokers:
            f.broker_info.add_metric([c, str(b.node_id), f"{b.host}:{b.port}"], 1)
        for topic in view.metadata.topics:
            f.partitions.add_metric([c, topic.name], len(topic.partitions))
            if not per_partition:
                continue
            for p in topic.partitions:
                labels = [c, topic.name, str(p.partition)]
                if p.leader is not None:
                    f.leader.add_metric(labels, p.leader)
                # 0 while offline, as kafka_exporter: no leader is not the preferred one
                preferred = p.leader is not None and p.replicas[:1] == (p.leader,)
                f.preferred.add_metric(labels, 1 if preferred else 0)
                f.replicas.add_metric(labels, len(p.replicas))
                f.isr.add_metric(labels, len(p.isr))
                f.under.add_metric(labels, 1 if len(p.isr) < len(p.replicas) else 0)
    if view.offsets is not None and per_partition:
        for o in view.offsets.partitions:
            labels = [c, o.topic, str(o.partition)]
            f.current.add_metric(labels, o.log_end)
            f.oldest.add_metric(labels, o.log_start)


def _groups(f: _Families, view: ClusterView, per_partition: bool) -> None:
    c = view.cluster
    offset_sums: dict[tuple[str, str], int] = {}
    lag_sums: dict[tuple[str, str], int] = {}
    for row in view.rows:
        key = (row.group, row.topic)
        offset_sums[key] = offset_sums.get(key, 0) + row.committed
        if row.lag is not None:
            lag_sums[key] = lag_sums.get(key, 0) + row.lag
        if per_partition:
            labels = [c, row.group, row.topic, str(row.partition)]
            f.group_offset.add_metric(labels, row.committed)
            if row.lag is not None:
                f.group_lag.add_metric(labels, row.lag)
    for (group, topic), total in offset_sums.items():
        f.group_offset_sum.add_metric([c, group, topic], total)
    for (group, topic), total in lag_sums.items():
        f.group_lag_sum.add_metric([c, group, topic], total)
    if view.groups is not None:
        for g in view.groups.groups:
            f.members.add_metric([c, g.group_id], len(g.members))
