"""Builds one cluster's detection: the :class:`DetectionLoop` wired to the scheduler's jobs, the store and
snapshots, and the tail sink that feeds it."""

from __future__ import annotations

from collections.abc import Sequence

from collectors.scope import Scope
from collectors.settings import ClusterSettings
from collectors.snapshots.dump import dump_group
from service.detection.epochs import EpochEnds, EpochEndSource
from service.detection.inputs import CollectorHealth
from service.detection.loop import DetectionLoop, Listener, UnstoredListener
from service.detection.snapshots import DumpFunction, SnapshotRateLimit, SnapshotTrigger
from service.detection.tail_sink import DetectionTailSink
from service.scheduler import CollectorJob
from service.settings import Settings
from service.state import LatestObservations
from store import Store
from store.alerts import AlertStore


def snapshot_rate_limit(settings: Settings) -> SnapshotRateLimit:
    """One per process: the hourly budget is global."""
    d = settings.detection
    return SnapshotRateLimit(d.snapshot_group_interval_seconds, d.snapshot_max_per_hour)


def build_detection(
    cluster: ClusterSettings,
    settings: Settings,
    latest: LatestObservations,
    store: Store,
    scheduler_jobs: Sequence[CollectorJob],
    *,
    alerts: AlertStore,
    rate_limit: SnapshotRateLimit | None = None,
    dump: DumpFunction | None = None,
    listeners: Sequence[Listener] = (),
    unstored_listeners: Sequence[UnstoredListener] = (),
    epoch_ends: EpochEndSource | None = None,
    scope: Scope | None = None,
) -> tuple[DetectionLoop, DetectionTailSink]:
    """The detection loop of ``cluster`` and its tail sink.

    The loop is added as a sink to ``cluster``'s jobs in ``scheduler_jobs`` (after the cache, so it reads
    the observation that triggered it). Set ``loop.tail_live`` once the tail exists. Start and stop the
    loop with the runtime: stop it *after* the tail, so the tail's last batch is evaluated and saved.
    """
    name = cluster.name
    snapshots = None
    if settings.detection.snapshots:
        if dump is None:

            def dump(group: str, trigger: str) -> str:
                result = dump_group(cluster, group, settings.snapshots, trigger=trigger, index=store)
                return result.info.id

        limit = rate_limit if rate_limit is not None else snapshot_rate_limit(settings)
        snapshots = SnapshotTrigger(dump, alerts, limit)
    jobs = [job for job in scheduler_jobs if job.collector.cluster == name]
    loop = DetectionLoop(
        name,
        settings.detection,
        latest=latest,
        alerts=alerts,
        health=CollectorHealth(lambda: [job.status for job in jobs], settings.stale_after_intervals),
        log_end_reached_at=lambda topic, partition, offset: store.log_end_reached_at(
            name, topic, partition, offset
        ),
        log_end_reached_at_many=lambda wanted: store.log_end_reached_at_many(name, wanted),
        snapshots=snapshots,
        listeners=listeners,  # told of alerts once stored, e.g. the notification dispatcher
        unstored_listeners=unstored_listeners,  # told of transitions the store refused (kept in memory)
        # KIP-320 checks for epoch_divergence: the cluster seam's offsets_for_leader_epoch
        epoch_ends=EpochEnds(name, epoch_ends) if epoch_ends is not None else None,
        blind_gap_seconds=blind_gap_seconds(settings),
        scope=scope if scope is not None else Scope.of(cluster),
    )
    for job in jobs:
        job.sinks.append(loop.observe)
    return loop, DetectionTailSink(loop)


def blind_gap_seconds(settings: Settings) -> float:
    """A gap between offsets observations that makes a blind spell: the offsets collector gone stale,
    and never less than ``detection.blind_gap_min_seconds`` (30 s: a slow cycle on a large cluster is not
    blindness)."""
    floor = settings.detection.blind_gap_min_seconds
    return max(floor, settings.stale_after_intervals * settings.intervals.offsets)
