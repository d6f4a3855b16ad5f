"""offsetguard's own families about partitions and groups (``offsetguard_`` prefix; see docs/metrics.md)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric

from service.metrics.view import ClusterView

GTP = ["cluster", "group", "topic", "partition"]
TP = ["cluster", "topic", "partition"]


def own_families(views: list[ClusterView]) -> Iterator[Metric]:
    """Per-partition and per-group-partition families, and when each observation was taken."""
    g = GaugeMetricFamily
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
    observed = g(
        "offsetguard_observation_timestamp_seconds",
        "When the latest observation of each kind was taken (epoch seconds).",
        labels=["cluster", "observation"],
    )
    for view in views:
        c = view.cluster
        for row in view.rows:
            x = row.lag
            labels = [c, x.group, x.topic, str(x.partition)]
            committed.add_metric(labels, x.committed)
            if x.lag is not None:
                lag.add_metric(labels, x.lag)
            if row.seconds is not None:
                seconds.add_metric(labels, row.seconds)
        epochs: dict[tuple[str, int], int] = {}
        if view.offsets is not None:
            for o in view.offsets.partitions:
                labels = [c, o.topic, str(o.partition)]
                start.add_metric(labels, o.log_start)
                end.add_metric(labels, o.log_end)
                if o.leader_epoch is not None:
                    epochs[(o.topic, o.partition)] = o.leader_epoch
        if view.metadata is not None:  # metadata is the authority on leader epochs
            for p in view.metadata.partitions():
                if p.leader_epoch >= 0:
                    epochs[(p.topic, p.partition)] = p.leader_epoch
        for (topic, partition), value in epochs.items():
            epoch.add_metric([c, topic, str(partition)], value)
        for kind, obs in (
            ("metadata", view.metadata),
            ("offsets", view.offsets),
            ("groups", view.groups),
            ("committed", view.committed),
        ):
            if obs is not None:
                observed.add_metric([c, kind], obs.observed_at)
    yield from (lag, seconds, committed, start, end, epoch, observed)
