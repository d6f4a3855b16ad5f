"""No sandbox JVM outlives its parent process, even when the parent is SIGKILLed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from sandbox import jvm
from sandbox.cluster import SandboxCluster, start_sandbox
from sandbox.readiness import registered_brokers

pytestmark = pytest.mark.integration

CHILD = """
import json, sys, time
from sandbox.cluster import start_sandbox
cluster = start_sandbox(sys.argv[1], 1)
nodes = [[n.pid, str(n.properties_path)] for n in cluster.nodes.values()]
print(json.dumps(nodes), flush=True)
time.sleep(600)
"""


def test_start_sandbox_parent_sigkilled_jvms_die(tmp_path: Path) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path / "sb")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout is not None
        nodes = json.loads(parent.stdout.readline())
        assert nodes and all(jvm.pid_alive(pid, marker) for pid, marker in nodes)

        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(jvm.pid_alive(p, m) for p, m in nodes):
            time.sleep(0.2)

        assert not any(jvm.pid_alive(pid, marker) for pid, marker in nodes)
    finally:
        parent.kill()
        parent.wait(10)


def test_start_sandbox_from_short_lived_thread_jvms_outlive_thread(tmp_path: Path) -> None:
    started: list[SandboxCluster] = []
    worker = threading.Thread(target=lambda: started.append(start_sandbox(tmp_path / "sb", 1)))
    worker.start()
    worker.join(240)
    (cluster,) = started
    try:
        time.sleep(2)  # a death signal tied to the exited thread would have fired by now

        assert cluster.brokers[1].alive()
        assert registered_brokers(cluster.bootstrap_servers) == {1}
    finally:
        cluster.down()
