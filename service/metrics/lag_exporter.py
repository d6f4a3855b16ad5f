"""Families named and labelled as seglo/kafka-lag-exporter's, so its dashboards and rules work unchanged.

``member_host``, ``consumer_id`` and ``client_id`` come from the member the partition is assigned to, or
are ``"unknown"`` (as kafka-lag-exporter writes for a group without members) when none is. Unlike
kafka-lag-exporter, a committed partition no member holds is still shown (with ``"unknown"``), an
unknown lag or lag in seconds is an absent series instead of ``NaN``, and negative lag is kept.

Names and label sets are kafka-lag-exporter's, so a coarser granularity leaves families out instead of
relabelling them: at ``topic`` the per-partition ones (:data:`PER_PARTITION`) go and its own aggregates
stay (max/sum per group, sum per group and topic); at ``group`` the per-topic sum goes too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from prometheus_client.core import GaugeMetricFamily, Metric

from collectors.model import GroupMember
from service.metrics.fast import FastGauge
from service.metrics.options import Granularity
from service.metrics.view import ClusterView, GroupPartition, assignments

UNKNOWN = "unknown"
GTP = ["cluster_name", "group", "topic", "partition", "member_host", "consumer_id", "client_id"]
G = ["cluster_name", "group"]
TP = ["cluster_name", "topic", "partition"]


class _Families(NamedTuple):
    offset: GaugeMetricFamily
    lag: GaugeMetricFamily
    lag_seconds: GaugeMetricFamily
    max_lag: GaugeMetricFamily
    max_lag_seconds: GaugeMetricFamily
    sum_lag: GaugeMetricFamily
    topic_sum_lag: GaugeMetricFamily
    latest: GaugeMetricFamily
    earliest: GaugeMetricFamily


def _families() -> _Families:
    g = FastGauge
    return _Families(
        g("kafka_consumergroup_group_offset", "Last group consumed offset of a partition", labels=GTP),
        g("kafka_consumergroup_group_lag", "Group offset lag of a partition", labels=GTP),
        g("kafka_consumergroup_group_lag_seconds", "Group time lag of a partition", labels=GTP),
        g("kafka_consumergroup_group_max_lag", "Max group offset lag", labels=G),
        g("kafka_consumergroup_group_max_lag_seconds", "Max group time lag", labels=G),
        g("kafka_consumergroup_group_sum_lag", "Sum of group offset lag", labels=G),
        g(
            "kafka_consumergroup_group_topic_sum_lag",
            "Sum of group offset lag across topic partitions",
            labels=["cluster_name", "group", "topic"],
        ),
        g("kafka_partition_latest_offset", "Latest offset of a partition", labels=TP),
        g("kafka_partition_earliest_offset", "Earliest offset of a partition", labels=TP),
    )


# Families with a series per partition or per group-partition: exposed at partition granularity only.
PER_PARTITION = frozenset({"offset", "lag", "lag_seconds", "latest", "earliest"})
PER_TOPIC = frozenset({"topic_sum_lag"})  # per group and topic: left out at group granularity


def lag_exporter_families(
    views: list[ClusterView], granularity: Granularity = "partition"
) -> Iterator[Metric]:
    """Every kafka-lag-exporter-compatible family over ``views``, less those finer than ``granularity``."""
    f = _families()
    per_partition = granularity == "partition"
    for view in views:
        _groups(f, view, per_partition)
        if view.offsets is not None and per_partition:
            for o in view.offsets.partitions:
                labels = [view.cluster, o.topic, str(o.partition)]
                f.latest.add_metric(labels, o.log_end)
                f.earliest.add_metric(labels, o.log_start)
    if per_partition:
        yield from f
        return
    left_out = PER_PARTITION | (PER_TOPIC if granularity == "group" else frozenset())
    yield from (family for name, family in zip(f._fields, f, strict=True) if name not in left_out)


def _groups(f: _Families, view: ClusterView, per_partition: bool) -> None:
    c = view.cluster
    max_lag: dict[str, int] = {}
    max_seconds: dict[str, float] = {}
    sum_lag: dict[str, int] = {}
    topic_sum: dict[tuple[str, str], int] = {}
    members = assignments(view.groups) if per_partition else {}
    for row in view.rows:
        if per_partition:
            _partition_series(f, c, row, members.get((row.group, row.topic, row.partition)))
        if row.lag is not None:
            max_lag[row.group] = max(max_lag.get(row.group, row.lag), row.lag)
            sum_lag[row.group] = sum_lag.get(row.group, 0) + row.lag
            key = (row.group, row.topic)
            topic_sum[key] = topic_sum.get(key, 0) + row.lag
        if row.seconds is not None:
            max_seconds[row.group] = max(max_seconds.get(row.group, row.seconds), row.seconds)
    for group, value in max_lag.items():
        f.max_lag.add_metric([c, group], value)
    for group, seconds in max_seconds.items():
        f.max_lag_seconds.add_metric([c, group], seconds)
    for group, value in sum_lag.items():
        f.sum_lag.add_metric([c, group], value)
    for (group, topic), value in topic_sum.items():
        f.topic_sum_lag.add_metric([c, group, topic], value)


def _partition_series(f: _Families, cluster: str, row: GroupPartition, m: GroupMember | None) -> None:
    member = (m.host, m.member_id, m.client_id) if m else (UNKNOWN, UNKNOWN, UNKNOWN)
    labels = [cluster, row.group, row.topic, str(row.partition), *member]
    f.offset.add_metric(labels, row.committed)
    if row.lag is not None:
        f.lag.add_metric(labels, row.lag)
    if row.seconds is not None:
        f.lag_seconds.add_metric(labels, row.seconds)
