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

from collections.abc import Callable, Iterator
from functools import partial
from typing import NamedTuple

from prometheus_client.core import GaugeMetricFamily, Metric

from service.metrics.fast import FastGauge
from service.metrics.memo import Escaped, LineGauge, LineMemo, Table, Values
from service.metrics.options import Granularity
from service.metrics.view import ClusterView, assignments

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


def _families(per_partition: bool) -> _Families:
    g = FastGauge
    # per-partition families (PER_PARTITION) take their lines from the collector's tables
    p = LineGauge if per_partition else FastGauge
    return _Families(
        p("kafka_consumergroup_group_offset", "Last group consumed offset of a partition", labels=GTP),
        p("kafka_consumergroup_group_lag", "Group offset lag of a partition", labels=GTP),
        p("kafka_consumergroup_group_lag_seconds", "Group time lag of a partition", labels=GTP),
        g("kafka_consumergroup_group_max_lag", "Max group offset lag", labels=G),
        g("kafka_consumergroup_group_max_lag_seconds", "Max group time lag", labels=G),
        g("kafka_consumergroup_group_sum_lag", "Sum of group offset lag", labels=G),
        g(
            "kafka_consumergroup_group_topic_sum_lag",
            "Sum of group offset lag across topic partitions",
            labels=["cluster_name", "group", "topic"],
        ),
        p("kafka_partition_latest_offset", "Latest offset of a partition", labels=TP),
        p("kafka_partition_earliest_offset", "Earliest offset of a partition", labels=TP),
    )


# Families with a series per partition or per group-partition: exposed at partition granularity only.
PER_PARTITION = frozenset({"offset", "lag", "lag_seconds", "latest", "earliest"})
PER_TOPIC = frozenset({"topic_sum_lag"})  # per group and topic: left out at group granularity


def lag_exporter_families(
    views: list[ClusterView], granularity: Granularity = "partition", memo: LineMemo | None = None
) -> Iterator[Metric]:
    """Every kafka-lag-exporter-compatible family over ``views``, less those finer than ``granularity``;
    the per-partition ones written by change (``memo``: the collector's lines of the previous render,
    :mod:`service.metrics.memo`)."""
    per_partition = granularity == "partition"
    f = _families(per_partition)
    memo = memo if memo is not None else LineMemo()
    for view in views:
        seconds = view.seconds
        _groups(f, view, seconds)
        if per_partition:
            _per_partition(f, view, seconds, memo)
    if per_partition:
        yield from f
        return
    left_out = PER_PARTITION | (PER_TOPIC if granularity == "group" else frozenset())
    yield from (family for name, family in zip(f._fields, f, strict=True) if name not in left_out)


def _groups(f: _Families, view: ClusterView, seconds: list[float | None]) -> None:
    """The aggregates over one cluster's group-partitions (``seconds``: each one's lag in seconds)."""
    c = view.cluster
    max_lag: dict[str, int] = {}
    max_seconds: dict[str, float] = {}
    sum_lag: dict[str, int] = {}
    topic_sum: dict[tuple[str, str], int] = {}
    for ((group, topic, _), _, lag), age in zip(view.lags, seconds, strict=True):
        if lag is not None:
            max_lag[group] = max(max_lag.get(group, lag), lag)
            sum_lag[group] = sum_lag.get(group, 0) + lag
            key = (group, topic)
            topic_sum[key] = topic_sum.get(key, 0) + lag
        if age is not None:
            max_seconds[group] = max(max_seconds.get(group, age), age)
    for group, value in max_lag.items():
        f.max_lag.add_metric([c, group], value)
    for group, age in max_seconds.items():
        f.max_lag_seconds.add_metric([c, group], age)
    for group, value in sum_lag.items():
        f.sum_lag.add_metric([c, group], value)
    for (group, topic), value in topic_sum.items():
        f.topic_sum_lag.add_metric([c, group, topic], value)


Member = tuple[str, str, str]  # (member_host, consumer_id, client_id)


def _per_partition(f: _Families, view: ClusterView, seconds: list[float | None], memo: LineMemo) -> None:
    """The :data:`PER_PARTITION` families' lines of one cluster, by change. A group-partition's row is
    keyed by its member too (its labels): a partition handed to another member is a new series."""
    esc = Escaped()
    c = esc(view.cluster)
    lags, reached, now = view.lags, view.reached, view.now
    rows = memo.table(view.cluster, "kafka_lag_exporter.group_partition")
    rows.rows((lags, view.groups), partial(_member_keys, view), partial(_gtp_block, c, esc))
    add = partial(_add, rows)
    add(f.offset, (lags,), lambda: [r[1] for r in lags])
    add(f.lag, (lags,), lambda: [r[2] for r in lags])
    add(f.lag_seconds, (lags, reached, now), lambda: seconds)
    rows.done()
    offsets = view.offsets.partitions if view.offsets is not None else ()
    rows = memo.table(view.cluster, "kafka_lag_exporter.offsets")
    rows.rows((view.offsets,), lambda: [(o.topic, o.partition) for o in offsets], partial(_tp_block, c, esc))
    add = partial(_add, rows)
    add(f.latest, (view.offsets,), lambda: [o.log_end for o in offsets])
    add(f.earliest, (view.offsets,), lambda: [o.log_start for o in offsets])
    rows.done()


def _member_keys(view: ClusterView) -> list[tuple[tuple[str, str, int], Member]]:
    """Each group-partition's key with its member's labels (one tuple per member, shared)."""
    members = assignments(view.groups)
    labels: dict[int, Member] = {}
    keys = []
    for key, _, _ in view.lags:
        m = members.get(key)
        if m is None:
            keys.append((key, _UNKNOWN))
            continue
        member = labels.get(id(m))  # the member objects live through the render: their ids stand
        if member is None:
            member = labels[id(m)] = (m.host, m.member_id, m.client_id)
        keys.append((key, member))
    return keys


_UNKNOWN: Member = (UNKNOWN, UNKNOWN, UNKNOWN)


def _add(
    rows: Table, family: GaugeMetricFamily, source: tuple[object, ...], values: Callable[[], Values]
) -> None:
    assert isinstance(family, LineGauge)  # per partition, _families made it one
    family.add_column(rows.column(family.name, source, values))


def _gtp_block(c: str, esc: Escaped, key: tuple[tuple[str, str, int], Member]) -> str:
    """A group-partition's label block as the GTP families write it (label names sorted); ``c``
    escaped."""
    (group, topic, partition), (host, member_id, client_id) = key
    return (
        f'{{client_id="{esc(client_id)}",cluster_name="{c}",consumer_id="{esc(member_id)}",'
        f'group="{esc(group)}",member_host="{esc(host)}",partition="{partition}",topic="{esc(topic)}"}}'
    )


def _tp_block(c: str, esc: Escaped, key: tuple[str, int]) -> str:
    return f'{{cluster_name="{c}",partition="{key[1]}",topic="{esc(key[0])}"}}'
