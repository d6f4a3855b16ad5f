"""The ACLs offsetguard needs on a cluster with an authorizer: read-only, per feature (``docs/security.md``).

Every request offsetguard sends and the operation Kafka's authorizer checks for it (``KafkaApis``):

===================== ================================================= =================================
request               checks                                            without it
===================== ================================================= =================================
Metadata              DESCRIBE on each topic                            the topic is left out, silently
ListOffsets           DESCRIBE on the topic                             TOPIC_AUTHORIZATION_FAILED
OffsetsForLeaderEpoch DESCRIBE on the topic (a consumer's, not replica)  TOPIC_AUTHORIZATION_FAILED
DescribeConfigs       DESCRIBE_CONFIGS on the topic / on the cluster    per-resource authorization error
                      for a broker's settings
ListGroups            DESCRIBE on the cluster, else only the groups     groups left out, silently
                      with DESCRIBE on the group
FindCoordinator       DESCRIBE on the group                             GROUP_AUTHORIZATION_FAILED
DescribeGroups        DESCRIBE on the group                             GROUP_AUTHORIZATION_FAILED
ConsumerGroupDescribe DESCRIBE on the group                             GROUP_AUTHORIZATION_FAILED
OffsetFetch (all)     DESCRIBE on the group, DESCRIBE on each topic     group: GROUP_AUTHORIZATION_FAILED;
                                                                        topic: left out, silently
Fetch                 READ on ``__consumer_offsets`` (tail, snapshots)  TOPIC_AUTHORIZATION_FAILED
===================== ================================================= =================================

The tail and snapshot readers assign partitions themselves (no consumer group, no commits), so no group ACL
is needed for them. DESCRIBE on the cluster is what lets offsetguard tell a group it may not describe from
a group that does not exist: ListGroups then lists every group, and one without DESCRIBE shows as "not
authorized" (``bench/acl_removal`` takes each grant away in turn and shows what changes).

Nothing offsetguard does writes to Kafka: a reset plan is a file for an operator to apply with their own
credentials (``kafka-consumer-groups --reset-offsets --from-file``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Resource = Literal["CLUSTER", "TOPIC", "GROUP"]
Operation = Literal["DESCRIBE", "DESCRIBE_CONFIGS", "READ"]
CLUSTER_NAME = "kafka-cluster"
ALL = "*"
OFFSETS_TOPIC = "__consumer_offsets"


@dataclass(frozen=True)
class Grant:
    """One ALLOW ACL (LITERAL pattern, any host) and why offsetguard needs it."""

    resource: Resource
    name: str
    operation: Operation
    features: tuple[str, ...]
    requests: tuple[str, ...]


GRANTS: tuple[Grant, ...] = (
    Grant(
        "CLUSTER",
        CLUSTER_NAME,
        "DESCRIBE",
        ("groups collector", "committed collector"),
        ("ListGroups (every group, so a group it may not describe shows as not authorized, not absent)",),
    ),
    Grant(
        "CLUSTER",
        CLUSTER_NAME,
        "DESCRIBE_CONFIGS",
        ("configs collector",),
        ("DescribeConfigs of a broker (offsets.retention.minutes, unclean.leader.election.enable, ...)",),
    ),
    Grant(
        "TOPIC",
        ALL,
        "DESCRIBE",
        ("metadata collector", "offsets collector", "committed collector", "leader epochs"),
        ("Metadata", "ListOffsets", "OffsetFetch (the topics of each group)", "OffsetsForLeaderEpoch"),
    ),
    Grant(
        "TOPIC",
        ALL,
        "DESCRIBE_CONFIGS",
        ("configs collector",),
        ("DescribeConfigs of a topic (retention, cleanup.policy, min.insync.replicas, ...)",),
    ),
    Grant(
        "TOPIC",
        OFFSETS_TOPIC,
        "READ",
        ("tail of __consumer_offsets", "snapshots"),
        ("Fetch from __consumer_offsets",),
    ),
    Grant(
        "GROUP",
        ALL,
        "DESCRIBE",
        ("groups collector", "committed collector"),
        ("FindCoordinator", "DescribeGroups", "ConsumerGroupDescribe", "OffsetFetch"),
    ),
)


def kafka_acls_commands(
    principal: str, bootstrap: str = "BOOTSTRAP", config: str = "admin.properties"
) -> list[str]:
    """The ``kafka-acls.sh`` commands granting :data:`GRANTS` to ``principal`` (``User:offsetguard``)."""
    flag = {"CLUSTER": "--cluster", "TOPIC": "--topic", "GROUP": "--group"}
    operation = {"DESCRIBE": "Describe", "DESCRIBE_CONFIGS": "DescribeConfigs", "READ": "Read"}
    lines = []
    for g in GRANTS:
        target = flag[g.resource] if g.resource == "CLUSTER" else f"{flag[g.resource]} '{g.name}'"
        lines.append(
            f"kafka-acls.sh --bootstrap-server {bootstrap} --command-config {config} --add"
            f" --allow-principal {principal} --operation {operation[g.operation]} {target}"
        )
    return lines
