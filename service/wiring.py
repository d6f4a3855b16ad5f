"""Builds one cluster's collectors over the real Kafka seam and connects them to the cache and the store."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from collectors.broker_metrics import BrokerMetricsCollector
from collectors.committed import CommittedCollector
from collectors.configs import ConfigsCollector
from collectors.errors import StoreWriteError
from collectors.groups import GroupsCollector
from collectors.kafka.seam import KafkaPythonSeam
from collectors.kafka.tail import AiokafkaTailConsumer
from collectors.metadata import MetadataCollector
from collectors.model import ClusterMetadata, CommittedObservation, OffsetsObservation
from collectors.offsets import OffsetsCollector
from collectors.reconcile import Reconciler
from collectors.scope import Scope
from collectors.seam import KafkaSeam
from collectors.settings import ClusterSettings
from collectors.tail import OffsetsTail
from collectors.tail_model import PositionStore, TailConsumer, TailSink
from collectors.tail_sinks import RecentEvents
from service.ha.writers import gated_sink
from service.held_writes import HeldWrites
from service.runs import FIRST_PICTURE
from service.scheduler import CollectorJob, Sink
from service.settings import Settings
from service.state import LatestObservations
from store import Store


def store_sink(store: Store) -> Sink:
    """Persist the observations that carry history; the write runs in a worker thread. A write the disk
    refuses is the store's health's business (counted, logged once): the collector's run still succeeds
    and the sinks after this one (detection) still get the observation."""

    async def sink(observation: Any) -> None:
        with contextlib.suppress(StoreWriteError):
            if isinstance(observation, CommittedObservation):
                await asyncio.to_thread(store.record_committed, observation)
            elif isinstance(observation, OffsetsObservation):
                await asyncio.to_thread(store.record_offsets, observation)
            elif isinstance(observation, ClusterMetadata):
                await asyncio.to_thread(store.record_metadata, observation)

    return sink


def build_cluster_jobs(
    cluster: ClusterSettings,
    settings: Settings,
    latest: LatestObservations,
    store: Store | None,
    *,
    seam: KafkaSeam | None = None,
    scope: Scope | None = None,
    writes: Callable[[], bool] | None = None,
    reconciler: Reconciler | None = None,
    held: list[HeldWrites] | None = None,
) -> tuple[list[CollectorJob], Callable[[], None]]:
    """Every collector of ``cluster`` as scheduler jobs, and the function that releases its client.

    Each is handed the cluster's ``scope`` (built from its settings unless given: the runtime shares one
    per cluster with the tail, detection and the API). ``writes``: history is stored only while it says
    so (ha: on the active replica; a standby's collectors feed the cache only). ``reconciler``: the
    committed offsets come from the live tail's view while it is trusted, the poll reconciling it
    (:mod:`collectors.reconcile`); without one, every committed run polls. ``held``: the store's writes
    go through a :class:`HeldWrites`, appended to it (the runtime holds them while it makes its first
    picture)."""
    seam = seam if seam is not None else KafkaPythonSeam(cluster)
    scope = scope if scope is not None else Scope.of(cluster)
    name = cluster.name
    intervals = settings.intervals
    sinks: list[Sink] = [latest.put]
    if store is not None:
        write = store_sink(store)
        if held is not None:
            write = HeldWrites(write)
            held.append(write)
        sinks.append(write if writes is None else gated_sink(write, writes))

    metadata = MetadataCollector(seam, name, scope=scope)

    async def metadata_source() -> ClusterMetadata:
        # Collectors that need leaders share a recent observation instead of each asking again.
        return await metadata.latest(max_age_s=intervals.metadata)

    # topics with offsets before this start: one an ACL hides by now is then not taken for deleted
    known = store.committed_topics(name) if store is not None else ()
    committed = CommittedCollector(
        seam, name, metadata_source, known_topics=known, scope=scope, reconciler=reconciler
    )
    offsets = OffsetsCollector(seam, name, metadata_source, scope=scope)
    groups = GroupsCollector(seam, name, metadata_source, scope=scope)
    configs = ConfigsCollector(seam, name, metadata_source, scope=scope)
    jobs = [
        CollectorJob(metadata, intervals.metadata, list(sinks)),
        CollectorJob(offsets, intervals.offsets, list(sinks)),
        CollectorJob(groups, intervals.groups, list(sinks)),
        CollectorJob(committed, intervals.committed, list(sinks)),
        # after the first picture: /metrics shows none of it, and its first run (every topic's settings
        # decoded) is CPU the first collections and the first render would share
        CollectorJob(configs, intervals.configs, list(sinks), after=FIRST_PICTURE),
    ]
    if not cluster.metrics_urls:
        return jobs, seam.close
    # First after the Kafka collectors: an exporter listing every partition of its broker costs that
    # broker seconds of CPU (~4 s a scrape at 20,000 partitions on three), which the brokers' answers to
    # the first collections would share (the first complete picture came 1-1.5 s later at 20k).
    metrics = BrokerMetricsCollector(name, cluster.metrics_urls)
    jobs.append(CollectorJob(metrics, intervals.broker_metrics, list(sinks), after=FIRST_PICTURE))

    def close() -> None:
        metrics.close()
        seam.close()

    return jobs, close


def build_cluster_tail(
    cluster: ClusterSettings,
    settings: Settings,
    store: PositionStore | None,
    *,
    sink: TailSink | None = None,
    consumer: TailConsumer | None = None,
    scope: Scope | None = None,
) -> OffsetsTail:
    """The ``__consumer_offsets`` tail of ``cluster``; positions kept in ``store``.

    Events go to ``sink`` (the runtime passes detection's sink beside a :class:`RecentEvents` buffer),
    else to a :class:`RecentEvents` buffer only.
    """
    tail = settings.tail
    return OffsetsTail(
        cluster.name,
        consumer if consumer is not None else AiokafkaTailConsumer(cluster),
        sink if sink is not None else RecentEvents(),
        store=store,
        start_from=tail.start_from,
        checkpoint_seconds=tail.checkpoint_seconds,
        max_batch_records=tail.max_batch_records,
        batch_interval_seconds=tail.batch_interval_seconds,
        scope=scope if scope is not None else Scope.of(cluster),
    )
