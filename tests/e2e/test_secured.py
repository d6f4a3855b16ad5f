"""offsetguard as an operator runs it on a secured cluster: a separate ``offsetguard serve`` with the README's
SASL_SSL ``clusters:`` entry (the password from a file), connecting as ``User:offsetguard`` with exactly
the ACLs ``docs/security.md`` lists (the sandbox grants them). It collects, tails ``__consumer_offsets``,
catches a rewind by an active member with its count, snapshots it and serves the group's lag."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from kafka import TopicPartition
from kafka.admin import NewTopic

from bench.serve_proc import Serve, until
from service.sandbox.cluster import SandboxCluster
from service.sandbox.security import MONITOR, kafka_python_config
from tests.e2e.consumers import group_consumer, join
from tests.e2e.harness import create_topics, produce, wait_for

pytestmark = pytest.mark.integration
README = Path(__file__).resolve().parents[2] / "README.md"
NAME = "secured"


def readme_cluster(kafka: SandboxCluster) -> dict[str, Any]:
    """The README's example ``clusters:`` entry, pointed at ``kafka`` (its hosts and files, nothing else)."""
    block = re.search(r"```yaml\n(clusters:\n.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert block is not None, "the README's config example"
    example = dict(yaml.safe_load(block.group(1))["clusters"][0])
    assert (example["security_protocol"], example["sasl"]["username"]) == ("SASL_SSL", MONITOR)
    assert set(example["sasl"]) == {"mechanism", "username", "password_file"}  # no secret in the file
    assert kafka.security is not None
    example.update(
        name=NAME,
        bootstrap_servers=kafka.bootstrap_servers.split(","),
        metrics_urls=kafka.metrics_urls,
        sasl={**example["sasl"], "password_file": str(kafka.security.password_file(MONITOR))},
        tls={**example["tls"], "cafile": str(kafka.security.pki.ca)},
    )
    return example


@pytest.fixture(scope="module")
def serve(kafka_sasl: SandboxCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    """``offsetguard serve`` on the secured sandbox, ready (collectors fresh, the tail caught up)."""
    work = tmp_path_factory.mktemp("secured-serve")
    settings = {
        "clusters": [readme_cluster(kafka_sasl)],
        "intervals": {"metadata": 2, "offsets": 2, "groups": 2, "committed": 2, "configs": 5},
        "snapshots": {"directory": str(work / "snapshots")},
        "detection": {"snapshot_group_interval_seconds": 0},
    }
    process = Serve(kafka_sasl, NAME, work, settings)
    try:
        until(process.ready, 120, "offsetguard serve ready on the secured cluster")
        yield process
    finally:
        process.stop()


def _rewinds(serve: Serve, group: str) -> list[dict[str, Any]]:
    return [a for a in serve.alerts() if a["kind"] == "offset_rewind" and a["group"] == group]


def test_secured_serve_with_least_privilege_catches_a_rewind_snapshots_it_and_serves_lag(
    serve: Serve, kafka_sasl: SandboxCluster
) -> None:
    topic = group = f"secured-rewind-{uuid.uuid4().hex[:6]}"
    create_topics(kafka_sasl, [NewTopic(topic, 1, 1)])
    produce(kafka_sasl, topic, 200)
    consumer = group_consumer(kafka_sasl, group, **kafka_python_config(kafka_sasl.security))
    tp = TopicPartition(topic, 0)
    try:
        join(consumer, topic)
        wait_for(lambda: consumer.poll(timeout_ms=100) is not None and consumer.assignment(), 60, "assigned")
        consumer.seek(tp, 100)
        consumer.commit()
        wait_for(lambda: serve.committed(group, topic, 0) == 100, 60, "the service saw the commit at 100")
        consumer.seek(tp, 20)  # an active member rewinds and commits it
        consumer.commit()
        wait_for(lambda: _rewinds(serve, group), 60, "rewind alert")
    finally:
        consumer.close(autocommit=False)

    [alert] = _rewinds(serve, group)
    assert (alert["topic"], alert["partition"], alert["severity"]) == (topic, 0, "critical")
    assert alert["magnitude"]["messages_replayed"] == 80
    snapshot = wait_for(
        lambda: serve.http.get(f"/api/v1/alerts/{alert['id']}").json()["snapshot_id"],
        90,
        "snapshot on the alert",
    )
    manifest = serve.http.get(f"/api/v1/snapshots/{snapshot}")
    assert manifest.status_code == 200, manifest.text

    ready = serve.http.get("/readyz").json()
    assert ready["ready"], ready
    line = wait_for(lambda: _lag_line(serve.http, group), 30, "the group's lag in /metrics")
    assert line.endswith(" 180.0"), line  # 200 written, committed at 20


def _lag_line(http: httpx.Client, group: str) -> str | None:
    text = http.get("/metrics").text
    return next(
        (
            line
            for line in text.splitlines()
            if line.startswith("offsetguard_group_lag_messages{") and f'group="{group}"' in line
        ),
        None,
    )
