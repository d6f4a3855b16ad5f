"""The real service on the 1-node sandbox with its store on the real PostgreSQL server (``store.url``):
ready, the API answering, and a rewind's alert written in PostgreSQL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic

from sandbox.cluster import SandboxCluster
from store.alerts import AlertStore
from store.settings import StoreSettings
from tests.service.integration.test_serve import _free_port, _wait_for, _wait_ready
from tests.support.postgres import PASSWORD, PostgresServer

pytestmark = pytest.mark.integration

TOPIC, GROUP = "serve-pg-orders", "serve-pg-billing"


def _commit(admin: KafkaAdminClient, offset: int) -> None:
    from tests.service.integration.test_scope_integration import _commit as commit

    commit(admin, GROUP, {TOPIC: offset})


def _rewinds(settings: StoreSettings) -> list[tuple[int, int]]:
    with AlertStore.open(settings) as alerts:
        found = alerts.list(kind="offset_rewind", group=GROUP).alerts
        return [(a.evidence["old_offset"], a.evidence["new_offset"]) for a in found]


def test_serve_on_postgresql_ready_answers_and_stores_a_rewind_alert(
    kafka1: SandboxCluster,
    postgres_server: PostgresServer,
    tmp_path: Path,
) -> None:
    url = postgres_server.create_database("serve_pg")
    admin = KafkaAdminClient(bootstrap_servers=kafka1.bootstrap_servers)
    admin.create_topics([NewTopic(TOPIC, 1, 1)])
    producer = KafkaProducer(bootstrap_servers=kafka1.bootstrap_servers)
    for i in range(20):
        producer.send(TOPIC, value=f"m{i}".encode(), partition=0)
    producer.flush()
    producer.close()
    _commit(admin, 15)

    config = tmp_path / "offsetguard.yaml"
    config.write_text(
        json.dumps(
            {
                "clusters": [{"name": "sandbox", "bootstrap_servers": kafka1.bootstrap_servers}],
                "intervals": {"metadata": 1, "offsets": 1, "groups": 1, "committed": 0.5, "configs": 5},
                "store": {"path": str(tmp_path / "never.db")},
                "detection": {"snapshots": False},
            }
        )
    )
    password = tmp_path / "pg-password"
    password.write_text(PASSWORD + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OFFSETGUARD_")}
    env["OFFSETGUARD_STORE__URL"] = url.replace(f":{PASSWORD}@", "@")  # the password from its file
    env["OFFSETGUARD_STORE__PASSWORD_FILE"] = str(password)
    port = _free_port()
    log = tmp_path / "serve.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli", "serve", "--config", str(config), "--port", str(port)],
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        env=env,
    )
    settings = StoreSettings(path=tmp_path / "never.db", url=url)
    try:
        assert _wait_ready(port, proc)["ready"] is True
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/clusters", timeout=5) as response:
            assert response.status == 200
        time.sleep(1.5)  # committed polls see 15 first
        _commit(admin, 5)  # an admin rewinds the group by 10
        _wait_for(lambda: _rewinds(settings) == [(15, 5)], timeout=30)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        admin.close()
    text = log.read_text()
    assert PASSWORD not in text
    assert not (tmp_path / "never.db").exists()  # nothing written to the SQLite default
