"""offsetguard's own families about partitions and groups (``offsetguard_`` prefix; see docs/metrics.md).

At ``topic`` and ``group`` granularity the group families keep their names and lose the labels finer
than the granularity (their values become sums, or the maximum for lag seconds: :mod:`aggregate`), and
the partition log offsets become sums per topic; so ``sum by (cluster, group, topic) (...)`` and
``max by (...)`` queries read the same at every granularity down to theirs. The leader epoch does not
aggregate and is dropped there.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric

from service.metrics.aggregate import group_totals, topic_log_totals
from service.metrics.fast import BlockGauge, FastGauge, escape_label
from service.metrics.options import Granularity
from service.metrics.view import ClusterView

GTP = ["cluster", "group", "topic", "partition"]
TP = ["cluster", "topic", "partition"]
GROUP_LABELS: dict[Granularity, list[str]] = {
    "partition": GTP,
    "topic": ["cluster", "group", "topic"],
    "group": ["cluster", "group"],
}
_OVER = {"topic": "the group's partitions of the topic", "group": "all the group's partitions"}


def own_families(views: list[ClusterView], granularity: Granularity = "partition") -> Iterator[Metric]:
    """Per-partition and per-group-partition families, or their aggregates at a coarser granularity."""
    if granularity == "partition":
        yield from _per_partition(views)
    else:
        yield from _aggregated(views, granularity)


def observation_families(views: list[ClusterView]) -> Iterator[Metric]:
    """When each observation was taken (a health family: exposed whatever the settings)."""
    observed = GaugeMetricFamily(
        "offsetguard_observation_timestamp_seconds",
        "When the latest observation of each kind was taken (epoch seconds).",
        labels=["cluster", "observation"],
    )
    for view in views:
        for kind, obs in (
            ("metadata", view.metadata),
            ("offsets", view.offsets),
            ("groups", view.groups),
            ("committed", view.committed),
        ):
            if obs is not None:
                observed.add_metric([view.cluster, kind], obs.observed_at)
    yield observed


def cluster_families(views: list[ClusterView]) -> Iterator[Metric]:
    """Brokers and under-replicated partitions per topic (health: exposed whatever the settings; what the
    dashboard's cluster panels read, a few hundred series at most)."""
    brokers = GaugeMetricFamily(
        "offsetguard_cluster_brokers", "Brokers in the cluster's latest metadata.", labels=["cluster"]
    )
    under = GaugeMetricFamily(
        "offsetguard_topic_under_replicated_partitions",
        "Partitions of the topic whose in-sync replicas are fewer than their replicas (latest metadata).",
        labels=["cluster", "topic"],
    )
    for view in views:
        if view.metadata is None:
            continue
        brokers.add_metric([view.cluster], len(view.metadata.brokers))
        for t in view.metadata.topics:
            count = sum(1 for p in t.partitions if len(p.isr) < len(p.replicas))
            under.add_metric([view.cluster, t.name], count)
    yield from (brokers, under)


def _per_partition(views: list[ClusterView]) -> Iterator[Metric]:
    """Each row's label block is written once for its three families, from the view's lag rows (no
    :class:`~service.metrics.view.GroupPartition` is built: this is every scrape's bulk)."""
    g = BlockGauge
    lag = g(
        "offsetguard_group_lag_messages",
        "Log end offset minus committed offset; negative when the commit is beyond the log end.",
        labels=GTP,
    )
    seconds = g(
        "offsetguard_group_lag_seconds",
        "Age of the oldest unconsumed message (a lower bound from the log-end history); 0 when lag is 0.",
        labels=GTP,
    )
    committed = g("offsetguard_group_committed_offset", "Committed offset of the group.", labels=GTP)
    start = g("offsetguard_partition_log_start_offset", "Log start offset of the partition.", labels=TP)
    end = g("offsetguard_partition_log_end_offset", "Log end offset (high watermark).", labels=TP)
    epoch = FastGauge("offsetguard_partition_leader_epoch", "Leader epoch of the partition.", labels=TP)
    add_lag, add_seconds, add_committed = lag.appender(), seconds.appender(), committed.appender()
    add_start, add_end = start.appender(), end.appender()
    escaped: dict[str, str] = {}

    def esc(value: str) -> str:
        e = escaped.get(value)
        if e is None:
            e = escaped[value] = escape_label(value)
        return e

    for view in views:
        c = esc(view.cluster)
        reached, now = view.reached, view.now
        # the blocks as BlockGauge.block writes them for GTP and TP (label names sorted)
        for (group, topic, partition), offset, behind in view.lags:
            block = f'{{cluster="{c}",group="{esc(group)}",partition="{partition}",topic="{esc(topic)}"}}'
            add_committed((block, offset))
            if behind is None:
                continue
            add_lag((block, behind))
            if behind == 0:
                add_seconds((block, 0.0))
            elif behind > 0 and (at := reached.get((topic, partition, offset + 1))) is not None:
                add_seconds((block, max(0.0, now - at)))  # as view.lag_seconds
        epochs: dict[tuple[str, int], int] = {}
        if view.offsets is not None:
            for o in view.offsets.partitions:
                block = f'{{cluster="{c}",partition="{o.partition}",topic="{esc(o.topic)}"}}'
                add_start((block, o.log_start))
                add_end((block, o.log_end))
                if o.leader_epoch is not None:
                    epochs[(o.topic, o.partition)] = o.leader_epoch
        if view.metadata is not None:  # metadata is the authority on leader epochs
            for p in view.metadata.partitions():
                if p.leader_epoch >= 0:
                    epochs[(p.topic, p.partition)] = p.leader_epoch
        for (topic, partition), value in epochs.items():
            epoch.add_metric([view.cluster, topic, str(partition)], value)
    yield from (lag, seconds, committed, start, end, epoch)


def _aggregated(views: list[ClusterView], granularity: Granularity) -> Iterator[Metric]:
    g = FastGauge
    over = _OVER[granularity]
    labels = GROUP_LABELS[granularity]
    lag = g(
        "offsetguard_group_lag_messages",
        f"Sum over {over} of log end offset minus committed offset (negative lags included).",
        labels=labels,
    )
    seconds = g(
        "offsetguard_group_lag_seconds",
        f"Age of the oldest unconsumed message over {over} (max; a lower bound from the log-end history).",
        labels=labels,
    )
    committed = g(
        "offsetguard_group_committed_offset",
        f"Sum of the committed offsets over {over} (its rate is the group's consumption rate).",
        labels=labels,
    )
    tl = ["cluster", "topic"]
    start = g(
        "offsetguard_partition_log_start_offset", "Sum of the log start offsets of the topic.", labels=tl
    )
    end = g("offsetguard_partition_log_end_offset", "Sum of the log end offsets of the topic.", labels=tl)
    for view in views:
        c = view.cluster
        for key, t in group_totals(view.rows, granularity).items():
            committed.add_metric([c, *key], t.committed)
            if t.lag is not None:
                lag.add_metric([c, *key], t.lag)
            if t.seconds is not None:
                seconds.add_metric([c, *key], t.seconds)
        if view.offsets is not None:
            for topic, logs in topic_log_totals(view.offsets.partitions).items():
                start.add_metric([c, topic], logs.log_start)
                end.add_metric([c, topic], logs.log_end)
    yield from (lag, seconds, committed, start, end)
