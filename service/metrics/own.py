"""offsetguard's own families about partitions and groups (``offsetguard_`` prefix; see docs/metrics.md).

At ``topic`` and ``group`` granularity the group families keep their names and lose the labels finer
than the granularity (their values become sums, or the maximum for lag seconds: :mod:`aggregate`), and
the partition log offsets become sums per topic; so ``sum by (cluster, group, topic) (...)`` and
``max by (...)`` queries read the same at every granularity down to theirs. The leader epoch does not
aggregate and is dropped there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cache, partial

from prometheus_client.core import GaugeMetricFamily, Metric

from service.metrics.aggregate import group_totals, topic_log_totals
from service.metrics.fast import FastGauge
from service.metrics.memo import Escaped, LineGauge, LineMemo, Table, Values
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


def own_families(
    views: list[ClusterView], granularity: Granularity = "partition", memo: LineMemo | None = None
) -> Iterator[Metric]:
    """Per-partition and per-group-partition families, or their aggregates at a coarser granularity
    (``memo``: the lines of the previous render, :mod:`service.metrics.memo`)."""
    if granularity == "partition":
        yield from _per_partition(views, memo)
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


def _per_partition(views: list[ClusterView], memo: LineMemo | None = None) -> Iterator[Metric]:
    """Each family's lines per cluster from a :class:`~service.metrics.memo.Table` of its committed
    group-partitions (lag rows) or partitions: with ``memo`` (the collector's), a series whose value did
    not change since the previous render keeps the line written then; a row's label block is written
    once for all its families (no :class:`~service.metrics.view.GroupPartition` is built: this is every
    scrape's bulk)."""
    memo = memo if memo is not None else LineMemo()
    g = LineGauge
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
    epoch = g("offsetguard_partition_leader_epoch", "Leader epoch of the partition.", labels=TP)
    esc = Escaped()
    for view in views:
        _write_cluster(memo, view, esc, (lag, seconds, committed, start, end, epoch))
    yield from (lag, seconds, committed, start, end, epoch)


def _write_cluster(memo: LineMemo, view: ClusterView, esc: Escaped, families: tuple[LineGauge, ...]) -> None:
    """One cluster's lines of the six per-partition families (in :func:`_per_partition`'s order)."""
    lag, seconds, committed, start, end, epoch = families
    c = esc(view.cluster)
    lags, reached, now = view.lags, view.reached, view.now
    rows = memo.table(view.cluster, "group_partition")
    rows.rows((lags,), lambda: [r[0] for r in lags], partial(_gtp_block, c, esc))
    _add(committed, rows, (lags,), lambda: [r[1] for r in lags])
    _add(lag, rows, (lags,), lambda: [r[2] for r in lags])
    _add(seconds, rows, (lags, reached, now), lambda: view.seconds)
    rows.done()
    offsets = view.offsets
    parts = offsets.partitions if offsets is not None else ()
    rows = memo.table(view.cluster, "partition")
    keys = rows.rows((offsets,), lambda: [(o.topic, o.partition) for o in parts], partial(_tp_block, c, esc))
    _add(start, rows, (offsets,), lambda: [o.log_start for o in parts])
    _add(end, rows, (offsets,), lambda: [o.log_end for o in parts])
    rows.done()
    epochs = cache(partial(_epochs, view))

    def epoch_keys() -> list[tuple[str, int]]:
        found = list(epochs())
        return keys if found == keys else found  # the partitions' keys when the same (held once)

    # the epochs read the metadata's topics only: the collector hands the same tuple again while no topic
    # changed, so a new metadata observation (every 30 s) re-reads nothing
    topics = view.metadata.topics if view.metadata is not None else None
    rows = memo.table(view.cluster, "epoch")
    rows.rows((offsets, topics), epoch_keys, partial(_tp_block, c, esc))
    _add(epoch, rows, (offsets, topics), lambda: list(epochs().values()))
    rows.done()


def _gtp_block(c: str, esc: Escaped, key: tuple[str, str, int]) -> str:
    """A group-partition's label block as a GTP family writes it (label names sorted); ``c`` escaped."""
    group, topic, partition = key
    return f'{{cluster="{c}",group="{esc(group)}",partition="{partition}",topic="{esc(topic)}"}}'


def _tp_block(c: str, esc: Escaped, key: tuple[str, int]) -> str:
    topic, partition = key
    return f'{{cluster="{c}",partition="{partition}",topic="{esc(topic)}"}}'


def _add(family: LineGauge, rows: Table, source: tuple[object, ...], values: Callable[[], Values]) -> None:
    family.add_column(rows.column(family.name, source, values))


def _epochs(view: ClusterView) -> dict[tuple[str, int], int]:
    """Leader epoch per partition: the offsets observation's, overridden by the metadata's (the
    authority on leader epochs), in the order first seen."""
    epochs: dict[tuple[str, int], int] = {}
    if view.offsets is not None:
        for o in view.offsets.partitions:
            if o.leader_epoch is not None:
                epochs[(o.topic, o.partition)] = o.leader_epoch
    if view.metadata is not None:
        for p in view.metadata.partitions():
            if p.leader_epoch >= 0:
                epochs[(p.topic, p.partition)] = p.leader_epoch
    return epochs


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
