"""``offsetguard serve`` with ``log_format: json`` through a rewind: every line it writes is a JSON object,
the alert's line names the alert, its kind and where; no access lines with the access log off, and no
library below WARNING at log_level INFO."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from kafka import TopicPartition
from kafka.admin import NewTopic

from bench.serve_proc import Serve, until
from sandbox.cluster import SandboxCluster
from service.logs import ACCESS_LOGGER, OWN_PACKAGES
from tests.e2e.consumers import group_consumer, join
from tests.e2e.harness import create_topics, produce, wait_for

pytestmark = pytest.mark.integration
NAME = "logs"


def _rewinds(serve: Serve, group: str) -> list[dict[str, Any]]:
    return [a for a in serve.alerts() if a["kind"] == "offset_rewind" and a["group"] == group]


def _parsed(log: Path) -> list[dict[str, Any]]:
    """Every line of stdout and stderr as JSON; fails naming the first line that is not an object."""
    lines = []
    for number, text in enumerate(log.read_text(encoding="utf-8").splitlines(), 1):
        try:
            line = json.loads(text)
        except ValueError:
            pytest.fail(f"line {number} is not JSON: {text!r}")
        assert isinstance(line, dict), f"line {number} is not an object: {text!r}"
        lines.append(line)
    return lines


def test_serve_json_logs_every_line_parses_rewind_line_has_its_context(
    kafka1: SandboxCluster, tmp_path: Path
) -> None:
    topic = group = f"logs-rewind-{uuid.uuid4().hex[:6]}"
    create_topics(kafka1, [NewTopic(topic, 1, 1)])
    produce(kafka1, topic, 100)
    settings = {
        "log_format": "json",
        "log_level": "INFO",
        "access_log": False,
        "intervals": {"metadata": 1, "offsets": 1, "groups": 1, "committed": 1, "configs": 5},
        "snapshots": {"directory": str(tmp_path / "snapshots")},
        "detection": {"snapshot_group_interval_seconds": 0},
    }
    serve = Serve(kafka1, NAME, tmp_path, settings)
    try:
        until(serve.ready, 60, "offsetguard serve ready")
        consumer = group_consumer(kafka1, group)
        tp = TopicPartition(topic, 0)
        try:
            join(consumer, topic)
            wait_for(
                lambda: consumer.poll(timeout_ms=100) is not None and consumer.assignment(), 30, "assigned"
            )
            consumer.seek(tp, 80)
            consumer.commit()
            wait_for(lambda: serve.committed(group, topic, 0) == 80, 30, "the service saw the commit at 80")
            consumer.seek(tp, 20)  # an active member rewinds and commits it
            consumer.commit()
            [alert] = wait_for(lambda: _rewinds(serve, group), 30, "rewind alert")
        finally:
            consumer.close(autocommit=False)
    finally:
        serve.stop()  # SIGTERM: the lifespan's last lines are written too

    lines = _parsed(tmp_path / "serve.log")
    assert all({"time", "level", "logger", "message"} <= set(line) for line in lines)
    [fired] = [line for line in lines if line.get("alert_id") == alert["id"] and line.get("transition")]
    assert {k: fired.get(k) for k in ("logger", "kind", "cluster", "group", "topic", "partition")} == {
        "logger": "service.detection.loop",
        "kind": "offset_rewind",
        "cluster": NAME,
        "group": group,
        "topic": topic,
        "partition": 0,
    }
    assert (fired["transition"], fired["severity"], fired["level"]) == ("fired", "critical", "WARNING")
    messages = [line["message"] for line in lines]
    assert any(m.startswith("on-call console at http://") for m in messages)  # once a print()
    assert "offsetguard started: 1 cluster(s)" in messages
    assert messages[-1] == "offsetguard stopped"
    # access log off, though the test asked the API many times
    assert not [line for line in lines if line["logger"] == ACCESS_LOGGER]
    # INFO is offsetguard's: a library's line is a WARNING at least
    libraries = [line for line in lines if line["logger"].split(".")[0] not in OWN_PACKAGES]
    assert not [line for line in libraries if line["level"] in ("DEBUG", "INFO")], libraries
