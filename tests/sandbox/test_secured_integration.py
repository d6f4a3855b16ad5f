"""A secured sandbox for real (one node each): SASL_SSL with SCRAM-SHA-512, and mutual TLS, both with the
StandardAuthorizer. The super user sets up; offsetguard's collectors, connecting as the ``offsetguard``
principal with the settings ``status`` prints and the ACLs the sandbox granted, see every topic and group —
but for a topic an ACL denies them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
from kafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    NewTopic,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafka.structs import OffsetAndMetadata

from collectors import acls
from collectors.committed import CommittedCollector
from collectors.errors import KafkaAuthError
from collectors.seam import topic_gone
from sandbox.cluster import SandboxCluster, start_sandbox
from sandbox.security import MONITOR
from tests.collectors.integration.collector_it import build_collectors, unique, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.apart]  # (kafka_sasl, asked for by getfixturevalue)


@pytest.fixture(scope="module", params=["sasl_ssl", "mtls"])
def secured(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SandboxCluster]:
    if request.param == "sasl_ssl":  # the session's secured cluster
        yield request.getfixturevalue("kafka_sasl")
        return
    cluster = start_sandbox(tmp_path_factory.mktemp(request.param), brokers=1, secure=request.param)
    try:
        yield cluster
    finally:
        cluster.kill()  # throwaway: no controlled shutdown


def test_secured_sandbox_status_prints_the_client_settings(secured: SandboxCluster) -> None:
    status = SandboxCluster.load(secured.dir).status()
    client = status["clients"][MONITOR]
    assert secured.security is not None and status["security"] == secured.security.mode
    assert client["bootstrap_servers"] == secured.bootstrap_servers.split(",")
    assert client["security_protocol"] == {"sasl_ssl": "SASL_SSL", "mtls": "SSL"}[secured.security.mode]
    for password in secured.security.passwords.values():  # by their files only
        assert password not in repr(status)


def test_secured_sandbox_grants_the_monitor_exactly_the_documented_acls(secured: SandboxCluster) -> None:
    admin = KafkaAdminClient(**secured.client_config())
    try:
        found, error = admin.describe_acls(
            ACLFilter(
                f"User:{MONITOR}",
                None,
                ACLOperation.ANY,
                ACLPermissionType.ANY,
                ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY),
            )
        )
    finally:
        admin.close()
    assert error is None or error.errno == 0
    granted = {
        (a.resource_pattern.resource_type.name, a.resource_pattern.resource_name, a.operation.name)
        for a in found
        if a.permission_type == ACLPermissionType.ALLOW
    }
    assert granted == {(g.resource, g.name, g.operation) for g in acls.GRANTS}


def _deny(resource: ResourceType, name: str, operation: ACLOperation) -> ACL:
    return ACL(f"User:{MONITOR}", "*", operation, ACLPermissionType.DENY, ResourcePattern(resource, name))


def test_secured_sandbox_monitor_sees_what_it_is_granted_not_a_denied_topic(secured: SandboxCluster) -> None:
    seen_topic, hidden, group = unique("granted"), unique("hidden"), unique("group")
    admin = KafkaAdminClient(**secured.client_config())  # the super user
    producer = KafkaProducer(**secured.client_config())
    collectors = build_collectors(secured, "secured")
    try:
        admin.create_acls([_deny(ResourceType.TOPIC, hidden, ACLOperation.DESCRIBE)])
        admin.create_topics([NewTopic(seen_topic, 1, 1), NewTopic(hidden, 1, 1)])
        for topic in (seen_topic, hidden):
            producer.send(topic, b"m", partition=0)
        producer.flush(30)
        # the super user commits for the group on both topics: the monitor's OffsetFetch leaves one out
        admin.alter_group_offsets(
            group,
            {
                tp: OffsetAndMetadata(1, "", -1)
                for tp in (TopicPartition(seen_topic, 0), TopicPartition(hidden, 0))
            },
        )

        def seen() -> tuple[dict[str, int | None], dict[str, int]] | None:
            meta, offsets, _groups, committed, *_ = collectors.cycle()
            topics = {t.name for t in meta.topics}
            commits = {c.topic: c.offset for c in committed.offsets if c.group == group}
            if seen_topic not in topics or not commits:
                return None
            assert hidden not in topics  # denied: not even its name
            return {
                p.topic: p.log_end for p in offsets.partitions if p.topic in (seen_topic, hidden)
            }, commits

        ends, commits = wait_for(
            seen, what="the granted topic and group through the secured listener", timeout=60
        )
        assert ends == {seen_topic: 1}
        assert commits == {seen_topic: 1}
        # asked by name, Kafka says what the all-topics answers keep silent
        gone = unique("never-created")
        answers = collectors.seam.topic_errors([seen_topic, hidden, gone])
        assert answers[seen_topic] is None
        assert isinstance(answers[hidden], KafkaAuthError), answers
        assert topic_gone(answers[gone]), answers
        # so the committed collector reports the hidden topic's offsets as not seen, not as deleted
        known = CommittedCollector(
            collectors.seam, "secured", collectors.metadata.collect, known_topics=[hidden]
        )
        failures = asyncio.run(known.collect()).failures
        assert [(f.scope, f.key, f.reason) for f in failures] == [("topic", hidden, "not authorized")]
    finally:
        collectors.seam.close()
        producer.close()
        admin.close()
