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
from collections.abc import Callable, Iterator
from functools import cache, partial
from importlib.metadata import PackageNotFoundError, version
from typing import NamedTuple

from prometheus_client.core import GaugeMetricFamily, Metric

from service.metrics.fast import FastGauge
from service.metrics.memo import Escaped, LineGauge, LineMemo, Table, Values
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


def _families(per_partition: bool) -> _Families:
    g = FastGauge
    # per-partition families (PER_PARTITION) take their lines from the collector's tables
    p = LineGauge if per_partition else FastGauge
    return _Families(
        g("kafka_brokers", "Number of Brokers in the Kafka Cluster.", labels=["cluster"]),
        g("kafka_broker_info", "Information about the Kafka Broker.", labels=["cluster", "id", "address"]),
        g("kafka_topic_partitions", "Number of partitions for this Topic", labels=["cluster", "topic"]),
        p("kafka_topic_partition_current_offset", "Current Offset of a Broker at Topic/Partition", labels=TP),
        p("kafka_topic_partition_oldest_offset", "Oldest Offset of a Broker at Topic/Partition", labels=TP),
        p("kafka_topic_partition_leader", "Leader Broker ID of this Topic/Partition", labels=TP),
        p(
            "kafka_topic_partition_leader_is_preferred",
            "1 if Topic/Partition is using the Preferred Broker",
            labels=TP,
        ),
        p("kafka_topic_partition_replicas", "Number of Replicas for this Topic/Partition", labels=TP),
        p(
            "kafka_topic_partition_in_sync_replica",
            "Number of In-Sync Replicas for this Topic/Partition",
            labels=TP,
        ),
        p(
            "kafka_topic_partition_under_replicated_partition",
            "1 if Topic/Partition is under Replicated",
            labels=TP,
        ),
        p(
            "kafka_consumergroup_current_offset",
            "Current Offset of a ConsumerGroup at Topic/Partition",
            labels=GTP,
        ),
        g(
            "kafka_consumergroup_current_offset_sum",
            "Current Offset of a ConsumerGroup at Topic for all partitions",
            labels=GT,
        ),
        p(
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
    views: list[ClusterView], granularity: Granularity = "partition", memo: LineMemo | None = None
) -> Iterator[Metric]:
    """Every kafka_exporter-compatible family over ``views`` (families with no sample included); at a
    coarser granularity, all but the :data:`PER_PARTITION` ones. The per-partition ones are written by
    change (``memo``: the collector's lines of the previous render, :mod:`service.metrics.memo`)."""
    per_partition = granularity == "partition"
    f = _families(per_partition)
    memo = memo if memo is not None else LineMemo()
    for view in views:
        _topics(f, view)
        _groups(f, view)
        if per_partition:
            _per_partition(f, view, memo)
    yield build_info()
    if per_partition:
        yield from f
    else:
        yield from (family for name, family in zip(f._fields, f, strict=True) if name not in PER_PARTITION)


def _topics(f: _Families, view: ClusterView) -> None:
    c = view.cluster
    if view.metadata is not None:
        f.brokers.add_metric([c], len(view.metadata.brokers))
        for b in view.metadata.brokers:
            f.broker_info.add_metric([c, str(b.node_id), f"{b.host}:{b.port}"], 1)
        for topic in view.metadata.topics:
            f.partitions.add_metric([c, topic.name], len(topic.partitions))


def _per_partition(f: _Families, view: ClusterView, memo: LineMemo) -> None:
    """The :data:`PER_PARTITION` families' lines of one cluster, by change."""
    esc = Escaped()
    c = esc(view.cluster)
    tp = partial(_tp_block, c, esc)
    meta = view.metadata
    named = [(t.name, p) for t in meta.topics for p in t.partitions] if meta is not None else []
    parts = [p for _, p in named]
    rows = memo.table(view.cluster, "kafka_exporter.metadata")
    rows.rows((meta,), lambda: [(name, p.partition) for name, p in named], tp)
    add = partial(_add, rows, (meta,))
    add(f.leader, lambda: [p.leader for p in parts])
    # 0 while offline, as kafka_exporter: no leader is not the preferred one
    add(f.preferred, lambda: [int(p.leader is not None and p.replicas[:1] == (p.leader,)) for p in parts])
    add(f.replicas, lambda: [len(p.replicas) for p in parts])
    add(f.isr, lambda: [len(p.isr) for p in parts])
    add(f.under, lambda: [int(len(p.isr) < len(p.replicas)) for p in parts])
    rows.done()
    offsets = view.offsets.partitions if view.offsets is not None else ()
    rows = memo.table(view.cluster, "kafka_exporter.offsets")
    rows.rows((view.offsets,), lambda: [(o.topic, o.partition) for o in offsets], tp)
    add = partial(_add, rows, (view.offsets,))
    add(f.current, lambda: [o.log_end for o in offsets])
    add(f.oldest, lambda: [o.log_start for o in offsets])
    rows.done()
    lags = view.lags
    rows = memo.table(view.cluster, "kafka_exporter.group_partition")
    rows.rows((lags,), lambda: [r[0] for r in lags], partial(_gtp_block, c, esc))
    add = partial(_add, rows, (lags,))
    add(f.group_offset, lambda: [r[1] for r in lags])
    add(f.group_lag, lambda: [r[2] for r in lags])
    rows.done()


def _add(
    rows: Table, source: tuple[object, ...], family: GaugeMetricFamily, values: Callable[[], Values]
) -> None:
    assert isinstance(family, LineGauge)  # per partition, _families made it one
    family.add_column(rows.column(family.name, source, values))


def _tp_block(c: str, esc: Escaped, key: tuple[str, int]) -> str:
    """A partition's label block as the TP families write it (label names sorted); ``c`` escaped."""
    return f'{{cluster="{c}",partition="{key[1]}",topic="{esc(key[0])}"}}'


def _gtp_block(c: str, esc: Escaped, key: tuple[str, str, int]) -> str:
    group, topic, partition = key
    return f'{{cluster="{c}",consumergroup="{esc(group)}",partition="{partition}",topic="{esc(topic)}"}}'


def _groups(f: _Families, view: ClusterView) -> None:
    c = view.cluster
    offset_sums: dict[tuple[str, str], int] = {}
    lag_sums: dict[tuple[str, str], int] = {}
    for (group, topic, _), committed, lag in view.lags:
        key = (group, topic)
        offset_sums[key] = offset_sums.get(key, 0) + committed
        if lag is not None:
            lag_sums[key] = lag_sums.get(key, 0) + lag
    for (group, topic), total in offset_sums.items():
        f.group_offset_sum.add_metric([c, group, topic], total)
    for (group, topic), total in lag_sums.items():
        f.group_lag_sum.add_metric([c, group, topic], total)
    if view.groups is not None:
        for g in view.groups.groups:
            f.members.add_metric([c, g.group_id], len(g.members))
