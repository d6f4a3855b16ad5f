"""Clusters, topic partitions and the configuration audit."""

from __future__ import annotations

from pydantic import BaseModel


class ClusterOut(BaseModel):
    name: str
    configured: bool  # in the settings (else only history is left in the store)
    bootstrap_servers: list[str]
    cluster_id: str | None
    controller_id: int | None
    brokers: int | None
    topics: int | None
    metadata_observed_at: float | None
    firing_alerts: int | None  # null when alerts are not kept
    # firing alerts by severity, drills left out (as in /metrics); null when alerts are not kept
    firing_by_severity: dict[str, int] | None = None


class ClusterList(BaseModel):
    clusters: list[ClusterOut]


class TopicPartitionOut(BaseModel):
    partition: int
    log_start: int | None
    log_end: int | None
    leader: int | None  # null: offline or unknown
    leader_epoch: int | None
    replicas: list[int] | None  # null: not in the latest metadata
    isr: list[int] | None
    offline_replicas: list[int] | None
    changed_at: float | None  # when log start/end or leadership last changed (store)
    observed_at: float | None  # the newest poll that confirmed them


class TopicPartitions(BaseModel):
    cluster: str
    topic: str
    partitions: list[TopicPartitionOut]


class TopicRisk(BaseModel):
    """A topic configured so committed data can be lost or rewound (see alerts.config_risk)."""

    topic: str
    risks: list[str]  # e.g. "unclean.leader.election.enable=true", "replication.factor=1"
    unclean_leader_election_enable: bool
    replication_factor: int
    min_insync_replicas: int
    retention_ms: int | None
    consuming_groups: list[str] | None  # null when the committed offsets were not polled yet


class Audit(BaseModel):
    cluster: str
    configs_observed_at: float | None  # null: topic configurations not polled yet (risks unknown)
    complete: bool  # false when configurations are missing or some could not be read
    risks: list[TopicRisk]
    broker_settings: dict[str, str]
    failures: list[str]
