"""The service end to end on the real 1-node sandbox: ready, history stored, `kill -9` loses nothing."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import CoordinatorNotAvailableError
from kafka.structs import OffsetAndMetadata

from sandbox.cluster import SandboxCluster
from store import Store
from store.settings import StoreSettings

pytestmark = pytest.mark.integration

TOPIC = "serve-e2e-orders"
GROUP = "serve-e2e-billing"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def workload(kafka1: SandboxCluster) -> Iterator[KafkaAdminClient]:
    admin = KafkaAdminClient(bootstrap_servers=kafka1.bootstrap_servers)
    admin.create_topics([NewTopic(TOPIC, 3, 1)])
    producer = KafkaProducer(bootstrap_servers=kafka1.bootstrap_servers)
    for p in range(3):
        for i in range(10):
            producer.send(TOPIC, value=f"m{i}".encode(), partition=p)
    producer.flush()
    producer.close()
    _commit(admin, {0: 4, 1: 7, 2: 10})
    yield admin
    admin.close()


def _commit(admin: KafkaAdminClient, offsets: dict[int, int]) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            admin.alter_group_offsets(
                GROUP, {TopicPartition(TOPIC, p): OffsetAndMetadata(o, "", -1) for p, o in offsets.items()}
            )
            return
        except CoordinatorNotAvailableError:  # __consumer_offsets is created on first use
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _start(kafka: SandboxCluster, tmp: Path, port: int) -> subprocess.Popen[bytes]:
    config = tmp / "offsetguard.yaml"
    config.write_text(
        json.dumps(
            {
                "clusters": [
                    {
                        "name": "sandbox",
                        "bootstrap_servers": kafka.bootstrap_servers,
                        "metrics_urls": kafka.metrics_urls,
                    }
                ],
                "intervals": {"metadata": 1, "offsets": 1, "groups": 1, "committed": 0.5, "configs": 5},
                "store": {"path": str(tmp / "og.db")},
            }
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OFFSETGUARD_")}
    log = (tmp / "serve.log").open("ab")
    return subprocess.Popen(
        [sys.executable, "-m", "cli", "serve", "--config", str(config), "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )


def _wait_ready(port: int, proc: subprocess.Popen[bytes], timeout: float = 60) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        assert proc.poll() is None, "service exited early"
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as response:
                return dict(json.load(response))
        except urllib.error.HTTPError as exc:
            last = json.load(exc)
        except OSError as exc:
            last = exc
        time.sleep(0.3)
    raise AssertionError(f"/readyz not ready in {timeout} s: {last}")


def _wait_for(predicate: object, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.3)
    raise AssertionError("condition not met in time")


def _committed(db: Path) -> dict[int, list[int | None]]:
    with Store.open(StoreSettings(path=db)) as store:
        history: dict[int, list[int | None]] = {}
        for point in store.committed_history("sandbox", GROUP, topic=TOPIC):
            history.setdefault(point.partition, []).append(point.offset)
        return history


def test_serve_kill_9_then_restart_keeps_history_without_duplicates(
    kafka1: SandboxCluster, workload: KafkaAdminClient, tmp_path: Path
) -> None:
    port = _free_port()
    proc = _start(kafka1, tmp_path, port)
    try:
        ready = _wait_ready(port, proc)
        assert ready["ready"] is True
        names = {c["name"] for c in ready["collectors"]}  # type: ignore[attr-defined]
        assert names >= {"metadata", "offsets", "groups", "committed", "configs", "broker_metrics"}
        db = tmp_path / "og.db"
        _wait_for(lambda: _committed(db) == {0: [4], 1: [7], 2: [10]})

        _commit(workload, {0: 8})
        _wait_for(lambda: _committed(db).get(0) == [4, 8])
        with Store.open(StoreSettings(path=db)) as store:
            ends = {p.partition: (p.log_start, p.log_end) for p in store.latest_partitions("sandbox", TOPIC)}
        assert ends == {0: (0, 10), 1: (0, 10), 2: (0, 10)}
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)

    assert _committed(tmp_path / "og.db") == {0: [4, 8], 1: [7], 2: [10]}

    proc = _start(kafka1, tmp_path, port)
    try:
        _wait_ready(port, proc)
        time.sleep(2)  # several committed cycles with unchanged offsets
        assert _committed(tmp_path / "og.db") == {0: [4, 8], 1: [7], 2: [10]}
    finally:
        proc.send_signal(signal.SIGTERM)
        # uvicorn finishes the lifespan (scheduler stopped, store closed), then re-raises SIGTERM
        assert proc.wait(30) in (0, -signal.SIGTERM)
    assert "offsetguard stopped" in (tmp_path / "serve.log").read_text()  # the lifespan's last line


def test_collect_once_json_reports_exact_offsets_and_lag(
    kafka1: SandboxCluster, workload: KafkaAdminClient
) -> None:
    _commit(workload, {0: 8, 1: 7, 2: 10})
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "cli",
            "collect",
            "--bootstrap",
            kafka1.bootstrap_servers,
            "--once",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    out = json.loads(proc.stdout)
    assert out["errors"] == {}
    rows = {
        (r["partition"]): (r["committed"], r["log_start"], r["log_end"], r["lag"])
        for r in out["lag"]
        if r["group"] == GROUP
    }
    assert rows == {0: (8, 0, 10, 2), 1: (7, 0, 10, 3), 2: (10, 0, 10, 0)}
    topic = next(t for t in out["metadata"]["topics"] if t["name"] == TOPIC)
    assert sorted(p["partition"] for p in topic["partitions"]) == [0, 1, 2]
    assert any(g["group_id"] == GROUP for g in out["groups"]["groups"])
