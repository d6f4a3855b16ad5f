"""Is a sandbox node up? Its log says the server started, and describe-cluster lists the broker.

Kafka is asked through :mod:`collectors.kafka.admin`."""

from __future__ import annotations

import socket
import time

from collectors.errors import KafkaError
from collectors.kafka import admin
from sandbox.config import HOST, SandboxError
from sandbox.node import SandboxNode

# KRaft (3.x and 4.x) logs the first; a Kafka 3.x broker in ZooKeeper mode the second
STARTED_MARKERS = (b"Kafka Server started", b"] started (kafka.server.KafkaServer)")


def wait_started(node: SandboxNode, deadline: float) -> None:
    """Wait until ``node``'s log, after its latest start, says the server started; fail if it exits."""
    while time.monotonic() < deadline:
        with open(node.log_path, "rb") as fh:
            fh.seek(node.log_offset)
            text = fh.read()
            if any(marker in text for marker in STARTED_MARKERS):
                return
        if not node.alive():
            raise SandboxError(f"node {node.node_id} exited during start; see {node.log_path}")
        time.sleep(0.2)
    raise SandboxError(f"node {node.node_id} did not start in time; see {node.log_path}")


def zookeeper_ok(port: int) -> bool:
    """ZooKeeper's ``ruok`` four-letter word answered ``imok`` on ``port``."""
    try:
        with socket.create_connection((HOST, port), timeout=2.0) as sock:
            sock.sendall(b"ruok")
            return sock.recv(16) == b"imok"
    except OSError:
        return False


def wait_zookeeper(node: SandboxNode, deadline: float) -> None:
    """Wait until the ZooKeeper node answers ``ruok``; fail if it exits."""
    port = node.spec.controller_port or 0
    while time.monotonic() < deadline:
        if zookeeper_ok(port):
            return
        if not node.alive():
            raise SandboxError(f"ZooKeeper exited during start; see {node.log_path}")
        time.sleep(0.2)
    raise SandboxError(f"ZooKeeper did not answer on port {port} in time; see {node.log_path}")


def registered_brokers(bootstrap_servers: str) -> set[int]:
    """The brokers registered and unfenced now (:func:`collectors.kafka.admin.registered_brokers`)."""
    return admin.registered_brokers(bootstrap_servers)


def cluster_id(bootstrap_servers: str) -> str | None:
    """The id the cluster reports (a ZooKeeper-mode cluster makes its own at first start)."""
    return admin.cluster_id(bootstrap_servers)


def wait_group_coordinator(bootstrap_servers: str, deadline: float) -> None:
    """Wait for a group coordinator (the first ask creates ``__consumer_offsets``); fail at ``deadline``."""
    try:
        admin.wait_group_coordinator(bootstrap_servers, deadline)
    except KafkaError as exc:
        raise SandboxError(exc.message) from exc
