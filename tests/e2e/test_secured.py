"""offsetguard as an operator runs it on a secured cluster: a separate ``offsetguard serve`` with the README's
SASL_SSL ``clusters:`` entry (the password from a file), connecting as ``User:offsetguard`` with exactly
the ACLs ``docs/security.md`` lists (the sandbox grants them). It collects, tails ``__consumer_offsets``,
catches a rewind by an active member with its count, snapshots it and serves the group's lag."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from kafka import TopicPartition
from kafka.admin import NewTopic

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
def serve(kafka_sasl: SandboxCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """``offsetguard serve`` on the secured sandbox, ready (collectors fresh, the tail caught up)."""
    work = tmp_path_factory.mktemp("secured-serve")
    config = {
        "clusters": [readme_cluster(kafka_sasl)],
        "intervals": {"metadata": 2, "offsets": 2, "groups": 2, "committed": 2, "configs": 5},
        "store": {"path": str(work / "og.db")},
        "snapshots": {"directory": str(work / "snapshots")},
        "detection": {"snapshot_group_interval_seconds": 0},
    }
    (work / "offsetguard.yaml").write_text(yaml.safe_dump(config))
    port = _free_port()
    log = (work / "serve.log").open("wb")
    cli = Path(sys.executable).with_name("offsetguard")
    proc = subprocess.Popen(
        [str(cli), "serve", "--config", str(work / "offsetguard.yaml"), "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
    try:
        wait_for(lambda: _ready(proc, http), 120, "offsetguard serve ready on the secured cluster")
        yield http
    finally:
        http.close()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        print((work / "serve.log").read_text(errors="replace")[-4000:])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ready(proc: subprocess.Popen[bytes], http: httpx.Client) -> bool:
    assert proc.poll() is None, f"offsetguard serve exited with {proc.returncode}"
    try:
        return http.get("/readyz").status_code == 200
    except httpx.TransportError:
        return False


def _committed(http: httpx.Client, group: str) -> int | None:
    r = http.get(f"/api/v1/clusters/{NAME}/groups/{group}")
    if r.status_code == 404:
        return None
    r.raise_for_status()
    return next((p["committed_offset"] for p in r.json()["partitions"]), None)


def _alerts(http: httpx.Client, group: str) -> list[dict[str, Any]]:
    r = http.get("/api/v1/alerts", params={"cluster": NAME, "group": group})
    r.raise_for_status()
    return list(r.json()["alerts"])


def test_secured_serve_with_least_privilege_catches_a_rewind_snapshots_it_and_serves_lag(
    serve: httpx.Client, kafka_sasl: SandboxCluster
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
        wait_for(lambda: _committed(serve, group) == 100, 60, "the service saw the commit at 100")
        consumer.seek(tp, 20)  # an active member rewinds and commits it
        consumer.commit()
        wait_for(lambda: any(a["kind"] == "offset_rewind" for a in _alerts(serve, group)), 60, "rewind alert")
    finally:
        consumer.close(autocommit=False)

    [alert] = [a for a in _alerts(serve, group) if a["kind"] == "offset_rewind"]
    assert (alert["topic"], alert["partition"], alert["severity"]) == (topic, 0, "critical")
    assert alert["magnitude"]["messages_replayed"] == 80
    snapshot = wait_for(
        lambda: serve.get(f"/api/v1/alerts/{alert['id']}").json()["snapshot_id"], 90, "snapshot on the alert"
    )
    manifest = serve.get(f"/api/v1/snapshots/{snapshot}")
    assert manifest.status_code == 200, manifest.text

    ready = serve.get("/readyz").json()
    assert ready["ready"], ready
    line = wait_for(lambda: _lag_line(serve, group), 30, "the group's lag in /metrics")
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
