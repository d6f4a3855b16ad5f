"""A real Kafka on loopback for tests and ``make run``: :func:`start_sandbox`, :class:`SandboxCluster`.

``brokers=1`` runs one combined broker+controller node (id 1); ``brokers=3`` runs one controller-only node
(id 100) and three broker-only nodes (ids 1, 2, 3), so brokers can be stopped without losing the quorum.
``kafka_version`` picks a release of the version matrix (:mod:`.versions`, default 4.1.2) and
``mode="zookeeper"`` runs a 3.x release on a ZooKeeper node (id 0) instead of a KRaft controller.
Every node runs the Prometheus JMX exporter javaagent with ``deploy/sandbox/jmx-rules.yaml``. The state
(ports, pids, cluster id) is kept in ``DIR/sandbox.json`` so a later process can stop or inspect nodes.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from pathlib import Path
from typing import Any

from collectors import acls
from collectors.settings import ClusterSettings
from sandbox import config, jvm, security, versions
from sandbox.config import HOST, SandboxError
from sandbox.node import STATE_FILE, SandboxNode, read_kafka, read_security, read_state, write_state
from sandbox.readiness import (
    cluster_id as reported_cluster_id,
)
from sandbox.readiness import registered_brokers, wait_group_coordinator, wait_started, wait_zookeeper
from sandbox.security import Mode, Security

CONTROLLER_HEAP = ("-Xms64m", "-Xmx256m")
# Feature levels are Kafka 4.1's defaults unless start_sandbox(features=...) says otherwise. 4.1 enables
# Eligible Leader Replicas (KIP-966) on new clusters; verified: with ELR on, a forced unclean election
# (LeaderElectionCommand --election-type unclean) still elects an out-of-sync replica and counts in
# UncleanLeaderElectionsPerSec, so the sandbox keeps the production default.
FORMAT_FEATURES: tuple[str, ...] = ()


class SandboxCluster:
    """Handle on a sandbox directory; built by :func:`start_sandbox` or :meth:`load`."""

    def __init__(
        self,
        directory: Path,
        cluster_id: str,
        nodes: list[SandboxNode],
        *,
        lib: Path,
        daemon: bool,
        broker_heap: str = "512m",
        security: Security | None = None,
        release: versions.KafkaRelease | None = None,
        mode: versions.Mode = "kraft",
    ) -> None:
        self.dir = directory
        self.release = release or versions.release(None)
        self.mode: versions.Mode = mode
        self.security = security
        self.broker_heap = broker_heap
        self.cluster_id = cluster_id
        self.nodes = {n.node_id: n for n in nodes}
        self.lib = lib
        self.daemon = daemon

    # ------------------------------------------------------------------ views
    @property
    def brokers(self) -> Mapping[int, SandboxNode]:
        return {i: n for i, n in sorted(self.nodes.items()) if n.spec.is_broker}

    @property
    def controller(self) -> SandboxNode:
        """The node holding the metadata quorum: the KRaft controller, or ZooKeeper in ZooKeeper mode."""
        return next(n for n in self.nodes.values() if n.spec.is_controller or n.spec.is_zookeeper)

    @property
    def controller_id(self) -> int:
        return self.controller.node_id

    @property
    def bootstrap_servers(self) -> str:
        """The client listeners (secured in a secured sandbox: see :meth:`client_config`)."""
        return ",".join(f"{HOST}:{n.port}" for n in self.brokers.values())

    @property
    def internal_servers(self) -> str:
        """Where the sandbox itself checks readiness: the unauthenticated INTERNAL listeners of a secured
        sandbox (a super user's), else the client listeners."""
        if self.security is None:
            return self.bootstrap_servers
        return ",".join(f"{HOST}:{n.spec.internal_port}" for n in self.brokers.values())

    def client_config(self, principal: str = security.ADMIN) -> dict[str, Any]:
        """kafka-python keyword arguments (bootstrap and security) to connect as ``principal``."""
        return {
            "bootstrap_servers": self.bootstrap_servers,
            **security.kafka_python_config(self.security, principal),
        }

    @property
    def metrics_urls(self) -> list[str]:
        """Every broker's metrics URL (by id), then the controller-only node's, if there is one."""
        urls = [n.metrics_url for n in self.brokers.values()]
        if self.controller.spec.roles == "controller":
            urls.append(self.controller.metrics_url)
        return urls

    def cluster_config(self, name: str = "sandbox", principal: str = security.MONITOR) -> dict[str, Any]:
        """offsetguard's ``clusters:`` entry for this sandbox, as a config file holds it (as ``principal``
        when secured; a password by its file)."""
        return {
            "name": name,
            "bootstrap_servers": self.bootstrap_servers.split(","),
            "metrics_urls": self.metrics_urls,
            **security.client_settings(self.security, principal),
        }

    def cluster_settings(self, name: str = "sandbox", principal: str = security.MONITOR) -> ClusterSettings:
        """offsetguard's settings for this sandbox (as ``principal`` when it is secured)."""
        return ClusterSettings(**self.cluster_config(name, principal))

    def describe(self) -> dict[str, Any]:
        return {
            "bootstrap_servers": self.bootstrap_servers,
            "kafka_version": self.release.version,
            "mode": self.mode,
            "cluster_id": self.cluster_id,
            "controller": self.controller.describe(),
            "brokers": [n.describe() for n in self.brokers.values()],
            "metrics_urls": self.metrics_urls,
            "dir": str(self.dir),
            **self.security_view(),
        }

    def status(self) -> dict[str, Any]:
        return {
            "dir": str(self.dir),
            "kafka_version": self.release.version,
            "mode": self.mode,
            "nodes": [n.describe() for n in self.nodes.values()],
            **self.security_view(),
        }

    def security_view(self) -> dict[str, Any]:
        """A secured sandbox's mode and the client settings to use, per principal (SCRAM passwords by
        their files)."""
        if self.security is None:
            return {}
        clients = {
            p: {
                "bootstrap_servers": self.bootstrap_servers.split(","),
                **security.client_settings(self.security, p),
            }
            for p in security.PRINCIPALS
        }
        return {"security": self.security.mode, "clients": clients}

    # ------------------------------------------------------------------ lifecycle
    def start_broker(self, node_id: int, timeout: float = 120.0) -> None:
        """Start a stopped broker on its old ports and wait until the cluster lists it."""
        node = self._broker(node_id)
        if node.alive():
            raise SandboxError(f"broker {node_id} is already running")
        self._start(node)
        self.save()
        self._wait_ready([node], timeout)

    def start_brokers(self, node_ids: Sequence[int], timeout: float = 120.0) -> None:
        """Start stopped brokers together (the end of a whole-cluster outage) and wait until the cluster
        lists all of them: their JVMs start side by side rather than one after another."""
        nodes = [self._broker(node_id) for node_id in node_ids]
        for node in nodes:
            if node.alive():
                raise SandboxError(f"broker {node.node_id} is already running")
        for node in nodes:
            self._start(node)
        self.save()
        self._wait_ready(nodes, timeout)

    def stop_broker(self, node_id: int, timeout: float = 60.0) -> None:
        """SIGTERM (controlled shutdown) and wait for the JVM to exit."""
        self._stop(self._broker(node_id), signal.SIGTERM, timeout)

    def kill_broker(self, node_id: int) -> None:
        """SIGKILL: no controlled shutdown, the controller notices by the session timeout."""
        self._stop(self._broker(node_id), signal.SIGKILL, 10.0)

    def restart_controller(self, timeout: float = 120.0) -> None:
        """SIGTERM the controller node, start it again on the same ports and wait until it is up.

        With ``--brokers 3`` the controller is a node of its own, so this exercises a controller failover
        without touching any broker; with ``--brokers 1`` it restarts the only node.
        """
        self.stop_controller()
        self.start_controller(timeout)

    def stop_controller(self) -> None:
        """SIGTERM the controller node (with ``--brokers 3``, the only voter: the quorum is lost)."""
        self._stop(self.controller, signal.SIGTERM, 30.0)

    def start_controller(self, timeout: float = 120.0) -> None:
        """Start the stopped controller node on its old ports and wait until it is up."""
        node = self.controller
        if node.alive():
            raise SandboxError("the controller is already running")
        self._start(node)
        self.save()
        self._wait_ready([node], timeout)

    def down(self, timeout: float = 60.0) -> None:
        """Stop every node (brokers first, then the controller). Data stays in ``dir``."""
        for node in sorted(self.nodes.values(), key=lambda n: not n.spec.is_broker):
            if node.alive():
                self._stop(node, signal.SIGTERM, timeout if node.spec.is_broker else 20.0)
        _IN_PROCESS.discard(self)

    def kill(self) -> None:
        """SIGKILL every node at once, no controlled shutdown: the teardown of a throwaway sandbox whose
        data nobody reads again (:meth:`down` takes seconds per broker, tens with ZooKeeper)."""
        live = [n for n in self.nodes.values() if n.alive() and n.pid]
        for node in live:
            with suppress(ProcessLookupError):
                os.kill(node.pid or 0, signal.SIGKILL)
        for node in live:
            self._stop(node, signal.SIGKILL, 10.0)  # reaps it (our child) and checks it is gone
        _IN_PROCESS.discard(self)

    def run_tool(
        self, main_class: str, *args: str, timeout: float = 60, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run a Kafka command-line tool class from the sandbox jars (WARN logs go to stderr)."""
        opts = (*jvm.TOOL_JVM_OPTS, versions.log_option(self.release, self.dir, tool=True))
        cmd = jvm.java_command(self.lib, main_class, args, opts)
        return jvm.run(cmd, timeout=timeout, input=input)

    def __enter__(self) -> SandboxCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.down()

    # ------------------------------------------------------------------ persistence
    def save(self) -> None:
        """Record ports and pids in ``dir/sandbox.json``."""
        secured = self.security.describe() if self.security is not None else None
        kafka = {"version": self.release.version, "mode": self.mode}
        write_state(self.dir, self.cluster_id, list(self.nodes.values()), secured, kafka)

    @classmethod
    def load(cls, directory: Path | str) -> SandboxCluster:
        """The sandbox recorded in ``directory/sandbox.json`` (its nodes may or may not be running)."""
        directory = Path(directory).resolve()
        cluster_id, nodes = read_state(directory)
        version, mode = read_kafka(directory)
        release = versions.release(version)
        lib = versions.ensure_jars(config.sandbox_home(), release)
        secured = security.Security.from_state(read_security(directory))
        return cls(
            directory,
            cluster_id,
            nodes,
            lib=lib,
            daemon=True,
            security=secured,
            release=release,
            mode=versions.check_mode(release, mode),
        )

    # ------------------------------------------------------------------ internals
    def _format_storage(self, features: Sequence[str]) -> None:
        """``StorageTool format`` every node's log dir, concurrently (static quorum, ``feature=level``s)."""
        flags = [arg for f in features for arg in ("--feature", f)] + security.format_args(self.security)

        def format_one(node: SandboxNode) -> None:
            args = ["format", "-t", self.cluster_id, "-c", str(node.properties_path), *flags]
            done = self.run_tool("kafka.tools.StorageTool", *args, timeout=120)
            if done.returncode != 0:
                raise SandboxError(f"formatting node {node.node_id} failed: {done.stdout}{done.stderr}")

        with ThreadPoolExecutor(max_workers=len(self.nodes)) as pool:
            list(pool.map(format_one, self.nodes.values()))

    def _broker(self, node_id: int) -> SandboxNode:
        node = self.brokers.get(node_id)
        if node is None:
            raise SandboxError(f"no broker {node_id} in this sandbox (brokers: {sorted(self.brokers)})")
        return node

    def _start(self, node: SandboxNode) -> None:
        heap = ("-Xms128m", f"-Xmx{self.broker_heap}") if node.spec.is_broker else CONTROLLER_HEAP
        home = config.sandbox_home()
        opts: tuple[str, ...] = (
            *heap,
            *jvm.NODE_JVM_OPTS,
            versions.log_option(self.release, self.dir, tool=False),
            f"-Dkafka.logs.dir={node.directory}",
        )
        if node.spec.is_zookeeper:  # the server class Kafka 3.x's zookeeper-server-start.sh runs
            main = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
        else:
            agent = config.jmx_agent(self.lib)
            opts += (f"-javaagent:{agent}={HOST}:{node.spec.metrics_port}:{home / config.RULES_FILE}",)
            main = "kafka.Kafka"
        cmd = jvm.java_command(self.lib, main, [str(node.properties_path)], opts)
        node.log_path.touch()
        node.log_offset = node.log_path.stat().st_size
        node.proc = jvm.spawn(cmd, node.log_path, daemon=self.daemon)
        node.pid = node.proc.pid
        if not self.daemon:
            _IN_PROCESS.add(self)

    def _stop(self, node: SandboxNode, sig: signal.Signals, timeout: float) -> None:
        if not jvm.signal_and_wait(node.pid or 0, str(node.properties_path), sig, timeout, node.proc):
            raise SandboxError(f"node {node.node_id} (pid {node.pid}) did not exit")

    def _wait_ready(self, nodes: list[SandboxNode], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for node in nodes:
            if node.spec.is_zookeeper:
                wait_zookeeper(node, deadline)
            else:
                wait_started(node, deadline)
        want = {n.node_id for n in nodes if n.spec.is_broker}
        seen: set[int] = set()
        while time.monotonic() < deadline:
            seen = registered_brokers(self.internal_servers)
            if want <= seen:
                return
            for node in nodes:
                if not node.alive():
                    raise SandboxError(f"node {node.node_id} exited; see {node.log_path}")
            time.sleep(0.3)
        raise SandboxError(f"brokers {sorted(want - seen)} not registered after {timeout:.0f}s")


_IN_PROCESS: set[SandboxCluster] = set()


@atexit.register
def _down_in_process_clusters() -> None:
    for cluster in list(_IN_PROCESS):
        for node in cluster.nodes.values():
            if node.alive() and node.pid:
                jvm.signal_and_wait(node.pid, str(node.properties_path), signal.SIGKILL, 5.0, node.proc)


def start_sandbox(
    directory: Path | str,
    brokers: int = 1,
    *,
    offsets_partitions: int = 10,
    daemon: bool = False,
    timeout: float = 180.0,
    features: Sequence[str] = FORMAT_FEATURES,
    broker_heap: str = "512m",
    broker_properties: Mapping[str, object] | None = None,
    secure: Mode = "plaintext",
    kafka_version: str | None = None,
    mode: str = "kraft",
) -> SandboxCluster:
    """Format and start a fresh sandbox in ``directory`` and wait until every broker is registered.

    Data of an earlier, stopped sandbox in the same directory is wiped; a running one is refused.
    With ``daemon=False`` the JVMs die with this process (see :mod:`.jvm`). ``features`` are passed to
    ``StorageTool format --feature``, e.g. ``["eligible.leader.replicas.version=0"]`` to turn ELR off.
    ``broker_heap`` is each broker's -Xmx (this process only; ``load`` uses the default);
    ``broker_properties`` override broker settings. ``__consumer_offsets`` exists when this returns.
    ``secure``: ``sasl_ssl`` or ``mtls`` for a secured sandbox (:mod:`.security`; certificates made anew).
    ``kafka_version`` (``4.1``, ``3.9.1``, ...; default 4.1.2) and ``mode`` (``kraft``, or ``zookeeper``
    for 3.x): see :mod:`.versions`; jars of a version not yet resolved are fetched with Maven first.
    """
    release = versions.release(kafka_version)
    kafka_mode = versions.check_mode(release, mode)
    if secure != "plaintext" and release.version != versions.DEFAULT_VERSION:
        raise SandboxError(
            f"a secured sandbox runs Kafka {versions.DEFAULT_VERSION} only, not {release.version}"
        )
    directory = Path(directory).resolve()
    if (directory / STATE_FILE).exists():
        old = SandboxCluster.load(directory)
        running = [n.node_id for n in old.nodes.values() if n.alive()]
        if running:
            raise SandboxError(f"sandbox in {directory} is running (nodes {running}); run 'sandbox down'")
        for node in old.nodes.values():
            shutil.rmtree(node.directory, ignore_errors=True)
    directory.mkdir(parents=True, exist_ok=True)
    lib = versions.ensure_jars(config.sandbox_home(), release)
    secured = security.prepare(secure, directory)
    zookeeper = kafka_mode == "zookeeper"
    specs = config.plan_nodes(brokers, secured=secured is not None, zookeeper=zookeeper)
    cluster_id = config.new_cluster_id()
    voters = config.quorum_voters(specs)
    zk_connect = f"{HOST}:{specs[0].controller_port}" if zookeeper else None
    nodes = [SandboxNode(spec, directory / spec.name) for spec in specs]
    for node in nodes:
        node.directory.mkdir(parents=True, exist_ok=True)
        if node.spec.is_zookeeper:
            node.properties_path.write_text(config.render_zookeeper(node.spec, node.directory / "data"))
            continue
        node.properties_path.write_text(
            config.render_properties(
                node.spec,
                voters=voters,
                data_dir=node.directory / "data",
                broker_count=brokers,
                offsets_partitions=offsets_partitions,
                extra=broker_properties,
                zookeeper_connect=zk_connect,
                share_groups=release.at_least >= (4, 0),
                secured=(
                    security.node_properties(
                        secured,
                        is_broker=node.spec.is_broker,
                        client_port=node.spec.port,
                        internal_port=node.spec.internal_port,
                    )
                    if secured is not None
                    else None
                ),
            )
        )
    cluster = SandboxCluster(
        directory,
        cluster_id,
        nodes,
        lib=lib,
        daemon=daemon,
        broker_heap=broker_heap,
        security=secured,
        release=release,
        mode=kafka_mode,
    )
    if not zookeeper:  # a ZooKeeper-mode broker registers itself; the cluster id comes from ZooKeeper
        cluster._format_storage(features)
    try:
        for node in sorted(nodes, key=lambda n: not n.spec.is_controller):
            cluster._start(node)
        cluster.save()
        cluster._wait_ready(nodes, timeout)
        # __consumer_offsets is created on the first FindCoordinator; do it now, not in every caller
        wait_group_coordinator(cluster.internal_servers, time.monotonic() + timeout)
        if zookeeper:
            cluster.cluster_id = reported_cluster_id(cluster.internal_servers) or cluster.cluster_id
            cluster.save()
        if secured is not None:
            security.grant(cluster.internal_servers, security.MONITOR, acls.GRANTS)
    except BaseException:
        cluster.down(timeout=10.0)
        raise
    return cluster
