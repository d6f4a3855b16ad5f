"""Clusters, topic partitions and the configuration audit, from the store and the latest observations.
Blocking (the store): called from routes that run in the thread pool."""

from __future__ import annotations

from alerts.config_risk import topic_risks
from collectors.model import ClusterMetadata, CommittedObservation, ConfigsObservation
from service.api.errors import NotFound
from service.api.schemas.clusters import Audit, ClusterOut, TopicPartitionOut, TopicPartitions, TopicRisk
from service.settings import Settings
from service.state import LatestObservations
from store import Store


def cluster_out(
    name: str,
    settings: Settings,
    latest: LatestObservations,
    firing: int | None,
    by_severity: dict[str, int] | None = None,
) -> ClusterOut:
    configured = settings.cluster(name)
    meta = latest.get(name, ClusterMetadata)
    return ClusterOut(
        name=name,
        configured=configured is not None,
        bootstrap_servers=list(configured.bootstrap_servers) if configured else [],
        cluster_id=meta.cluster_id if meta else None,
        controller_id=meta.controller_id if meta else None,
        brokers=len(meta.brokers) if meta else None,
        topics=len(meta.topics) if meta else None,
        metadata_observed_at=meta.observed_at if meta else None,
        firing_alerts=firing,
        firing_by_severity=by_severity,
    )


def cluster_names(settings: Settings, store: Store | None) -> list[str]:
    """Configured clusters first (in their order), then those only the store still has history of."""
    names = [c.name for c in settings.clusters]
    stored = store.clusters() if store is not None else ()
    return names + sorted(set(stored) - set(names))


def topic_partitions(store: Store, meta: ClusterMetadata | None, cluster: str, topic: str) -> TopicPartitions:
    """Log range and leadership of each partition; 404 if neither the store nor the metadata knows it."""
    stored = {p.partition: p for p in store.latest_partitions(cluster, topic)}
    info = meta.topic(topic) if meta else None
    described = {p.partition: p for p in info.partitions} if info else {}
    if not stored and info is None:
        raise NotFound(f"unknown topic {topic!r} in cluster {cluster!r}", code="topic_not_found")
    rows = []
    for number in sorted(set(stored) | set(described)):
        s, d = stored.get(number), described.get(number)
        rows.append(
            TopicPartitionOut(
                partition=number,
                log_start=s.log_start if s else None,
                log_end=s.log_end if s else None,
                leader=d.leader if d else (s.leader if s else None),
                leader_epoch=d.leader_epoch if d else (s.leader_epoch if s else None),
                replicas=list(d.replicas) if d else None,
                isr=list(d.isr) if d else None,
                offline_replicas=list(d.offline_replicas) if d else None,
                changed_at=s.changed_at if s else None,
                observed_at=s.last_seen_at if s else None,
            )
        )
    return TopicPartitions(cluster=cluster, topic=topic, partitions=rows)


def audit(cluster: str, configs: ConfigsObservation | None, committed: CommittedObservation | None) -> Audit:
    """Every topic whose configuration risks committed data (the rules of :mod:`alerts.config_risk`)."""
    consumers: dict[str, set[str]] | None = None
    if committed is not None:
        consumers = {}
        for c in committed.offsets:
            consumers.setdefault(c.topic, set()).add(c.group)
    risks = []
    for cfg in sorted(configs.topics if configs else (), key=lambda c: c.topic):
        found = topic_risks(cfg)
        if found:
            risks.append(
                TopicRisk(
                    topic=cfg.topic,
                    risks=found,
                    unclean_leader_election_enable=cfg.unclean_leader_election_enable,
                    replication_factor=cfg.replication_factor,
                    min_insync_replicas=cfg.min_insync_replicas,
                    retention_ms=cfg.retention_ms,
                    consuming_groups=None if consumers is None else sorted(consumers.get(cfg.topic, ())),
                )
            )
    failures = [f"{f.scope}:{f.key}: {f.error}" for f in configs.failures] if configs else []
    return Audit(
        cluster=cluster,
        configs_observed_at=configs.observed_at if configs else None,
        complete=configs is not None and not configs.failures,
        risks=risks,
        broker_settings=dict(configs.broker) if configs else {},
        failures=failures,
    )
