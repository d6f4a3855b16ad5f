"""Which of offsetguard's ACLs (:data:`collectors.acls.GRANTS`) a principal holds on a cluster, as Kafka's
authorizer answers (``offsetguard config check --connect``).

Nothing is read from the ACL store (listing ACLs needs more than offsetguard is granted, and a grant may come
through a group, a prefix or a super-user list). Kafka is asked what it would allow instead:

- DESCRIBE on the cluster: DescribeCluster with ``include_cluster_authorized_operations`` (KIP-430);
  DESCRIBE_CONFIGS on it: a DescribeConfigs of one broker's settings;
- DESCRIBE and DESCRIBE_CONFIGS on *every* topic, DESCRIBE on *every* group: requests about a made-up
  topic and group name, which only a wildcard grant covers. Kafka checks the authorization before the
  existence, so "unknown topic" or "no such group" means granted, an authorization error means not;
- the topics it can see (a topic without DESCRIBE is left out of Metadata, so those cannot be counted) and,
  for each, the operations Kafka lists (``include_topic_authorized_operations``), READ on
  ``__consumer_offsets`` among them.

Without an authorizer Kafka allows everything and says so. Requests go through the admin client's
connection manager, as the seam's do; a cluster that cannot be reached raises a
:class:`collectors.errors.KafkaError`.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kafka.admin import KafkaAdminClient
from kafka.protocol.admin import DescribeClusterRequest, DescribeConfigsRequest, DescribeGroupsRequest
from kafka.protocol.metadata import MetadataRequest

from collectors.acls import GRANTS, OFFSETS_TOPIC, Grant
from collectors.kafka.errors import translate
from collectors.kafka.privates import admin_manager

State = Literal["granted", "missing"]

# Kafka's AclOperation codes (org.apache.kafka.common.acl.AclOperation): bit n of an authorized-operations
# field is the operation of code n. kafka-python decodes the field as the set of its bits, None when the
# broker did not compute it.
_CODES = {"READ": 3, "DESCRIBE": 8, "DESCRIBE_CONFIGS": 10}
Operations = frozenset[int] | None
_TOPIC_AUTHORIZATION_FAILED = 29
_GROUP_AUTHORIZATION_FAILED = 30
_CLUSTER_AUTHORIZATION_FAILED = 31
_TOPIC, _BROKER = 2, 4  # DescribeConfigs resource types
_NAMED = 5  # topics named in a "missing on these topics" detail


@dataclass(frozen=True)
class GrantCheck:
    """One grant of :data:`GRANTS`, held or not, and what was seen."""

    grant: Grant
    state: State
    detail: str


@dataclass(frozen=True)
class Authorized:
    """What Kafka would allow the connected principal: per grant, in :data:`GRANTS` order."""

    brokers: int
    topics_visible: int
    checks: tuple[GrantCheck, ...]

    @property
    def missing(self) -> tuple[GrantCheck, ...]:
        return tuple(c for c in self.checks if c.state == "missing")


@dataclass(frozen=True)
class Answers:
    """The raw answers a check is judged on (what :func:`judge` needs, testable without Kafka)."""

    brokers: int
    cluster_operations: Operations  # DescribeCluster's authorized operations
    broker_configs_error: int  # DescribeConfigs of a broker: 0 or the error code
    topic_operations: Mapping[str, Operations]  # every visible topic -> its authorized operations
    offsets_topic_error: int  # Metadata for __consumer_offsets by name: 0 or the error code
    probe_topic_error: int  # Metadata for a made-up topic (DESCRIBE on every topic?)
    probe_topic_configs_error: int  # DescribeConfigs of a made-up topic (DESCRIBE_CONFIGS on every topic?)
    probe_group_error: int  # DescribeGroups of a made-up group (DESCRIBE on every group?)


def _allows(operations: Operations, operation: str) -> bool:
    return operations is not None and _CODES[operation] in operations


def _topic_wide(probe_error: int, lacking: list[str], visible: int) -> tuple[State, str]:
    if probe_error == _TOPIC_AUTHORIZATION_FAILED:
        return "missing", f"not granted on every topic ({visible} topics visible to it; others are not)"
    if lacking:
        names = ", ".join(sorted(lacking)[:_NAMED]) + (" ..." if len(lacking) > _NAMED else "")
        return "missing", f"not granted on {len(lacking)} of {visible} visible topics: {names}"
    return "granted", f"every topic ({visible} visible)"


def judge(answers: Answers) -> Authorized:
    """The checks of every grant from Kafka's ``answers``."""
    checks: list[GrantCheck] = []
    visible = len(answers.topic_operations)
    for grant in GRANTS:
        state: State
        if grant.resource == "CLUSTER" and grant.operation == "DESCRIBE_CONFIGS":
            state = "missing" if answers.broker_configs_error == _CLUSTER_AUTHORIZATION_FAILED else "granted"
            detail = ""
        elif grant.resource == "CLUSTER":
            state = "granted" if _allows(answers.cluster_operations, grant.operation) else "missing"
            detail = "" if answers.cluster_operations is not None else "the broker did not say"
        elif grant.resource == "TOPIC" and grant.name == OFFSETS_TOPIC:
            bits = answers.topic_operations.get(OFFSETS_TOPIC)
            if answers.offsets_topic_error == _TOPIC_AUTHORIZATION_FAILED:
                state, detail = "missing", f"{OFFSETS_TOPIC} is not even visible (no DESCRIBE on it)"
            else:
                state = "granted" if _allows(bits, grant.operation) else "missing"
                detail = ""
        elif grant.resource == "TOPIC":
            probe = (
                answers.probe_topic_error
                if grant.operation == "DESCRIBE"
                else answers.probe_topic_configs_error
            )
            lacking = [
                t for t, bits in answers.topic_operations.items() if not _allows(bits, grant.operation)
            ]
            state, detail = _topic_wide(probe, lacking, visible)
        else:  # GROUP
            if answers.probe_group_error == _GROUP_AUTHORIZATION_FAILED:
                state, detail = "missing", "not granted on every group"
            else:
                state, detail = "granted", "every group"
        checks.append(GrantCheck(grant, state, detail))
    return Authorized(answers.brokers, visible, tuple(checks))


def _operations(decoded: Any) -> Operations:
    return None if decoded is None else frozenset(int(bit) for bit in decoded)


def _describe_configs(resource_type: int, name: str, key: str) -> Any:
    resource = DescribeConfigsRequest.DescribeConfigsResource(
        resource_type=resource_type, resource_name=name, configuration_keys=[key]
    )
    return DescribeConfigsRequest(resources=[resource], include_synonyms=False, include_documentation=False)


async def _answers(manager: Any) -> Answers:
    node = manager.least_loaded_node()
    probe = f"offsetguard-acl-probe-{uuid.uuid4().hex[:12]}"  # a name no grant but a wildcard covers
    described = manager.send(DescribeClusterRequest(include_cluster_authorized_operations=True), node_id=node)
    everything = manager.send(
        MetadataRequest(
            topics=MetadataRequest.ALL_TOPICS,
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=True,
        ),
        node_id=node,
    )
    named = manager.send(
        MetadataRequest(
            topics=[
                MetadataRequest.MetadataRequestTopic(name=n, topic_id=None) for n in (OFFSETS_TOPIC, probe)
            ],
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=True,
        ),
        node_id=node,
    )
    configs = manager.send(_describe_configs(_TOPIC, probe, "cleanup.policy"), node_id=node)
    broker = manager.send(_describe_configs(_BROKER, str(node), "log.retention.ms"), node_id=node)
    groups = manager.send(
        DescribeGroupsRequest(groups=[probe], include_authorized_operations=False), node_id=node
    )
    cluster, listed, by_name = await described, await everything, await named
    configured, group, broker_configs = await configs, await groups, await broker
    errors = {t.name: t.error_code for t in by_name.topics}
    return Answers(
        brokers=len(cluster.brokers),
        cluster_operations=_operations(cluster.authorized_operations),
        broker_configs_error=broker_configs.results[0].error_code if broker_configs.results else 0,
        topic_operations={
            t.name: _operations(t.authorized_operations)
            for t in [*listed.topics, *(t for t in by_name.topics if t.name == OFFSETS_TOPIC)]
            if not t.error_code
        },
        offsets_topic_error=errors.get(OFFSETS_TOPIC, 0),
        probe_topic_error=errors.get(probe, 0),
        probe_topic_configs_error=configured.results[0].error_code if configured.results else 0,
        probe_group_error=group.groups[0].error_code if group.groups else 0,
    )


def check(client_kwargs: dict[str, Any], cluster: str) -> Authorized:
    """Connect with ``client_kwargs`` (:func:`collectors.kafka.seam.client_kwargs`) and judge every grant."""
    try:
        admin = KafkaAdminClient(**client_kwargs)
    except Exception as exc:
        raise translate(exc, cluster=cluster, what="bootstrap") from exc
    try:
        manager = admin_manager(admin)
        return judge(manager.run(_answers, manager))
    except Exception as exc:
        raise translate(exc, cluster=cluster, what="authorization check") from exc
    finally:
        admin.close()
