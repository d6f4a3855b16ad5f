"""A replayed incident on the real 1-node sandbox: the real runtime records a group's commits, the group is
rewound, and the reset plan for a time before the rewind, applied with Kafka's own
``kafka-consumer-groups --reset-offsets --from-file``, restores the pre-incident offsets."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from fastapi.testclient import TestClient
from kafka import KafkaAdminClient, KafkaProducer

from sandbox.cluster import SandboxCluster
from service.app import create_app
from service.settings import load_settings
from tests.collectors.tail.sandbox_it import commit, ensure_topic
from tests.service.api.builders import seg

pytestmark = pytest.mark.integration

TOOL = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
T = TypeVar("T")


def _until(check: Callable[[], T | None], timeout: float, what: str) -> T:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def _committed(admin: KafkaAdminClient, group: str) -> dict[int, int]:
    return {tp.partition: om.offset for tp, om in admin.list_group_offsets(group)[group].items()}


def _apply(kafka: SandboxCluster, group: str, plan: Path) -> str:
    done = kafka.run_tool(
        TOOL,
        "--bootstrap-server",
        kafka.bootstrap_servers,
        "--group",
        group,
        "--reset-offsets",
        "--from-file",
        str(plan),
        "--execute",
        timeout=120,
    )
    return f"rc={done.returncode}\n{done.stdout}\n{done.stderr}"


def test_reset_plan_replayed_incident_kafka_tool_restores_pre_incident_offsets(
    kafka1: SandboxCluster, tmp_path: Path
) -> None:
    topic, group = f"reset-plan-it-{uuid.uuid4().hex[:6]}", f"billing/é-{uuid.uuid4().hex[:6]}"
    admin = KafkaAdminClient(bootstrap_servers=kafka1.bootstrap_servers)
    try:
        ensure_topic(admin, topic, 2)
        producer = KafkaProducer(bootstrap_servers=kafka1.bootstrap_servers)
        for i in range(100):
            producer.send(topic, value=f"m{i}".encode(), partition=i % 2)
        producer.flush()
        producer.close()
        settings = load_settings(
            clusters=[kafka1.cluster_settings("sandbox").model_dump()],
            intervals={"metadata": 1, "offsets": 0.5, "groups": 1, "committed": 0.5, "configs": 60},
            store={"path": str(tmp_path / "og.db")},
            snapshots={"directory": str(tmp_path / "snapshots")},
            tail={"enabled": False},
            detection={"enabled": False},
        )
        base = f"/api/v1/clusters/sandbox/groups/{seg(group)}"
        with TestClient(create_app(settings)) as client:  # the real runtime: collectors and store
            commit(admin, group, {(topic, 0): 40, (topic, 1): 30})

            def recorded(want: dict[int, int]) -> bool:
                response = client.get(base)
                return (
                    response.status_code == 200
                    and {p["partition"]: p["committed_offset"] for p in response.json()["partitions"]} == want
                )

            _until(lambda: recorded({0: 40, 1: 30}), 30, "the runtime to record the first commits")
            before_incident = time.time()
            time.sleep(1.0)
            commit(admin, group, {(topic, 0): 5, (topic, 1): 2})  # the incident: a rewind
            _until(lambda: recorded({0: 5, 1: 2}), 30, "the runtime to record the rewind")

            at = {"time": f"{before_incident:.3f}"}
            kafka_plan = client.get(f"{base}/reset-plan", params={**at, "format": "kafka"})
            annotated = client.get(f"{base}/reset-plan", params=at)
        assert kafka_plan.status_code == 200, kafka_plan.text
        assert kafka_plan.text == f"{topic},0,40\n{topic},1,30\n"
        assert f"--bootstrap-server {kafka1.bootstrap_servers} --group" in annotated.text

        # Kafka's tool refuses the annotated rendering (# comments): offsets stay rewound.
        (tmp_path / "annotated.csv").write_text(annotated.text)
        outcome = _apply(kafka1, group, tmp_path / "annotated.csv")
        assert _committed(admin, group) == {0: 5, 1: 2}, outcome
        # Kafka 4.1 exits 0 even then: only its output and the offsets tell.
        assert "Error: Executing consumer group command failed" in outcome, outcome

        (tmp_path / "plan.csv").write_text(kafka_plan.text)
        outcome = _apply(kafka1, group, tmp_path / "plan.csv")
        assert "rc=0" in outcome and "Error" not in outcome, outcome
        assert _committed(admin, group) == {0: 40, 1: 30}, outcome
    finally:
        admin.close()
