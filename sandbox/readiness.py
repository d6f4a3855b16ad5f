"""Is a sandbox node up? Its log says the server started, and describe-cluster lists the broker."""

from __future__ import annotations

import logging
import socket
import time

from collectors.kafka.privates import cluster_metadata
from sandbox.config import HOST, SandboxError
from sandbox.node import SandboxNode

log = logging.getLogger(__name__)
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
    """Ids of the unfenced brokers describe-cluster lists right now (empty if the cluster cannot be asked)."""
    from kafka.admin import KafkaAdminClient  # kafka-python; imported late, it is slow to import

    try:
        admin = KafkaAdminClient(
            bootstrap_servers=bootstrap_servers,
            request_timeout_ms=5000,
            client_id="offsetguard-sandbox",
        )
    except Exception as exc:  # kafka-python raises many unrelated types while brokers start
        log.debug("describe-cluster not possible yet: %s", exc)
        return set()
    try:
        try:
            described = admin.describe_cluster()
        except KeyError:
            # kafka-python 3.0 fails on a DescribeCluster v0 answer (Kafka < 3.4 has no endpoint_type); the
            # brokers a Metadata request lists are the registered ones there (ZooKeeper mode has no fencing)
            metadata = cluster_metadata(admin)
            return {int(b["node_id"]) for b in metadata.get("brokers", [])}
        # kafka-python asks with include_fenced_brokers: a stopped broker stays listed, fenced
        return {int(b["broker_id"]) for b in described.get("brokers", []) if not b.get("is_fenced")}
    except Exception as exc:
        log.debug("describe-cluster failed: %s", exc)
        return set()
    finally:
        admin.close()


def cluster_id(bootstrap_servers: str) -> str | None:
    """The cluster id the brokers report (a ZooKeeper-mode cluster makes its own at first start)."""
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers, request_timeout_ms=10_000)
    try:
        found = cluster_metadata(admin)
        return str(found["cluster_id"]) if found.get("cluster_id") else None
    finally:
        admin.close()


def wait_group_coordinator(bootstrap_servers: str, deadline: float) -> None:
    """Ask for a group coordinator until one answers: the first ask creates ``__consumer_offsets``."""
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(
        bootstrap_servers=bootstrap_servers, request_timeout_ms=10_000, client_id="offsetguard-sandbox"
    )
    try:
        while True:
            try:
                admin.describe_groups(["offsetguard-sandbox-probe"])
                return
            except Exception as exc:  # COORDINATOR_NOT_AVAILABLE while the topic is being created
                if time.monotonic() > deadline:
                    raise SandboxError(f"no group coordinator answered: {exc}") from exc
                log.debug("group coordinator not ready: %s", exc)
                time.sleep(0.3)
    finally:
        admin.close()
