"""``offsetguard sandbox`` end to end on a 3-broker sandbox of its own (daemon JVMs, state in DIR)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sandbox.cluster import SandboxCluster
from sandbox.readiness import registered_brokers

pytestmark = pytest.mark.integration


def _cli(*args: str, timeout: float = 240) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "cli", "sandbox", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _alive(status: dict[str, Any]) -> dict[int, bool]:
    return {node["id"]: node["alive"] for node in status["nodes"]}


def test_sandbox_cli_lifecycle_up_stop_start_kill_down_reports_each_state(tmp_path: Path) -> None:
    where = str(tmp_path / "sb")
    try:
        up = _cli("up", "--brokers", "3", "--dir", where)
        assert [b["id"] for b in up["brokers"]] == [1, 2, 3]
        assert up["controller"]["id"] == 100
        assert len(up["bootstrap_servers"].split(",")) == 3
        assert _alive(_cli("status", "--dir", where)) == {100: True, 1: True, 2: True, 3: True}

        stopped = _cli("stop-broker", "2", "--dir", where)
        assert _alive(stopped) == {100: True, 1: True, 2: False, 3: True}
        assert 2 not in registered_brokers(up["bootstrap_servers"])

        _cli("start-broker", "2", "--dir", where)
        assert registered_brokers(up["bootstrap_servers"]) == {1, 2, 3}

        killed = _cli("kill-broker", "3", "--dir", where)
        assert _alive(killed) == {100: True, 1: True, 2: True, 3: False}

        down = _cli("down", "--dir", where)
        assert not any(_alive(down).values())
        assert (tmp_path / "sb" / "sandbox.json").exists()
    finally:
        if (tmp_path / "sb" / "sandbox.json").exists():
            SandboxCluster.load(where).down(timeout=10)


def test_sandbox_cli_down_purge_removes_directory(tmp_path: Path) -> None:
    where = str(tmp_path / "sb1")
    try:
        _cli("up", "--brokers", "1", "--dir", where)
        purged = _cli("down", "--purge", "--dir", where)
    finally:
        if (tmp_path / "sb1" / "sandbox.json").exists():
            SandboxCluster.load(where).down(timeout=10)
    assert purged["purged"] is True
    assert not (tmp_path / "sb1").exists()
