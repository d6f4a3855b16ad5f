"""A secured sandbox for real (one node each): SASL_SSL with SCRAM-SHA-512, and mutual TLS, both with the
StandardAuthorizer. The super user sets up; offsetguard's collectors, connecting as the ``offsetguard``
principal with the settings the sandbox prints, see exactly what an ACL grants them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import ACL, ACLOperation, ACLPermissionType, NewTopic, ResourcePattern, ResourceType

from service.sandbox.cluster import SandboxCluster, start_sandbox
from service.sandbox.security import MONITOR
from tests.collectors.integration.collector_it import build_collectors, unique, wait_for

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", params=["sasl_ssl", "mtls"])
def secured(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SandboxCluster]:
    cluster = start_sandbox(tmp_path_factory.mktemp(request.param), brokers=1, secure=request.param)
    try:
        yield cluster
    finally:
        cluster.down()


def _allow(resource: ResourceType, name: str, operation: ACLOperation) -> ACL:
    return ACL(f"User:{MONITOR}", "*", operation, ACLPermissionType.ALLOW, ResourcePattern(resource, name))


def test_secured_sandbox_status_prints_the_client_settings(secured: SandboxCluster) -> None:
    status = SandboxCluster.load(secured.dir).status()
    client = status["clients"][MONITOR]
    assert secured.security is not None and status["security"] == secured.security.mode
    assert client["bootstrap_servers"] == secured.bootstrap_servers.split(",")
    assert client["security_protocol"] in ("SASL_SSL", "SSL")


def test_secured_sandbox_monitor_sees_only_the_topics_it_is_granted(secured: SandboxCluster) -> None:
    granted, hidden = unique("granted"), unique("hidden")
    admin = KafkaAdminClient(**secured.client_config())  # the super user
    producer = KafkaProducer(**secured.client_config())
    collectors = build_collectors(secured, "secured")
    try:
        admin.create_topics([NewTopic(granted, 1, 1), NewTopic(hidden, 1, 1)])
        for topic in (granted, hidden):
            producer.send(topic, b"m", partition=0)
        producer.flush(30)
        admin.create_acls(
            [
                _allow(ResourceType.CLUSTER, "kafka-cluster", ACLOperation.DESCRIBE),
                _allow(ResourceType.TOPIC, granted, ACLOperation.DESCRIBE),
            ]
        )

        def seen() -> dict[str, int | None] | None:
            meta, offsets, *_ = collectors.cycle()
            topics = {t.name for t in meta.topics}
            if granted not in topics:
                return None
            assert hidden not in topics  # no ACL: not even its name
            return {p.topic: p.log_end for p in offsets.partitions}

        ends = wait_for(seen, what="the granted topic through the secured listener", timeout=60)
        assert ends == {granted: 1}
    finally:
        collectors.seam.close()
        producer.close()
        admin.close()
