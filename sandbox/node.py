"""One node of a sandbox, and the ``sandbox.json`` state file that lets a later process find it again."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox import jvm
from sandbox.config import HOST, NodeSpec, SandboxError

STATE_FILE = "sandbox.json"


@dataclass(slots=True)
class SandboxNode:
    """One running (or stopped) node of a sandbox."""

    spec: NodeSpec
    directory: Path
    pid: int | None = None
    log_offset: int = 0  # size of server.log when this JVM was started: readiness reads after it
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def node_id(self) -> int:
        return self.spec.node_id

    @property
    def port(self) -> int | None:
        return self.spec.port

    @property
    def metrics_url(self) -> str:
        return f"http://{HOST}:{self.spec.metrics_port}/metrics"

    @property
    def properties_path(self) -> Path:
        return self.directory / "node.properties"

    @property
    def log_path(self) -> Path:
        return self.directory / "server.log"

    def alive(self) -> bool:
        return jvm.pid_alive(self.pid, str(self.properties_path), self.proc)

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.node_id,
            "roles": self.spec.roles,
            "port": self.spec.port,
            "controller_port": self.spec.controller_port,
            "metrics_url": self.metrics_url,
            "pid": self.pid,
            "alive": self.alive(),
            "log": str(self.log_path),
        }


def write_state(
    directory: Path,
    cluster_id: str,
    nodes: list[SandboxNode],
    security: dict[str, Any] | None = None,
    kafka: dict[str, str] | None = None,
) -> None:
    """Atomically write ``directory/sandbox.json`` (``security``: a secured sandbox's, :mod:`.security`;
    ``kafka``: its version and mode, :mod:`.versions`)."""
    state = {
        "cluster_id": cluster_id,
        "kafka": kafka,
        "security": security,
        "nodes": [
            {
                "id": n.node_id,
                "roles": n.spec.roles,
                "port": n.spec.port,
                "controller_port": n.spec.controller_port,
                "metrics_port": n.spec.metrics_port,
                "internal_port": n.spec.internal_port,
                "pid": n.pid,
            }
            for n in nodes
        ],
    }
    tmp = directory / (STATE_FILE + ".tmp")
    tmp.write_text(json.dumps(state, indent=2) + "\n")
    tmp.replace(directory / STATE_FILE)


def read_state(directory: Path) -> tuple[str, list[SandboxNode]]:
    """The cluster id and nodes recorded in ``directory/sandbox.json``."""
    try:
        state = json.loads((directory / STATE_FILE).read_text())
        nodes = []
        for raw in state["nodes"]:
            spec = NodeSpec(
                raw["id"],
                raw["roles"],
                raw["port"],
                raw["controller_port"],
                raw["metrics_port"],
                raw.get("internal_port"),
            )
            nodes.append(SandboxNode(spec, directory / spec.name, pid=raw["pid"]))
        return str(state["cluster_id"]), nodes
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SandboxError(f"no usable sandbox state in {directory}: {exc}") from exc


def read_kafka(directory: Path) -> tuple[str | None, str]:
    """The Kafka version and mode recorded in ``directory/sandbox.json`` (none recorded: the default
    version, KRaft: a sandbox started before the version matrix)."""
    try:
        raw = json.loads((directory / STATE_FILE).read_text()).get("kafka")
    except (OSError, ValueError) as exc:
        raise SandboxError(f"no usable sandbox state in {directory}: {exc}") from exc
    if not isinstance(raw, dict):
        return None, "kraft"
    version = raw.get("version")
    return (str(version) if version else None), str(raw.get("mode") or "kraft")


def read_security(directory: Path) -> dict[str, Any] | None:
    """The security section of ``directory/sandbox.json`` (None: a plaintext sandbox)."""
    try:
        raw = json.loads((directory / STATE_FILE).read_text()).get("security")
    except (OSError, ValueError) as exc:
        raise SandboxError(f"no usable sandbox state in {directory}: {exc}") from exc
    return raw if isinstance(raw, dict) else None
