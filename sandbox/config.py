"""Where the sandbox's jars live, which ports it uses and the files each KRaft node is started from.

Pure rendering plus two small filesystem helpers; nothing here starts a JVM (see :mod:`.jvm`).

Layout of a sandbox directory ``DIR``::

    DIR/sandbox.json                  state (ports, pids, cluster id), see :mod:`.cluster`
    DIR/log4j2.properties             node logging (INFO to stdout, redirected to server.log)
    DIR/<node>/node.properties        e.g. DIR/broker-1/node.properties, DIR/controller-100/...
    DIR/<node>/data/                  log.dirs
    DIR/<node>/server.log             the JVM's stdout and stderr
"""

from __future__ import annotations

import base64
import os
import random
import socket
import threading
import uuid
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from collectors.errors import OffsetguardError

HOST = "127.0.0.1"
# The client listener's security (sandbox.security builds it; here so that the command line can
# offer the choices without importing the certificate code)
SecurityMode = Literal["plaintext", "sasl_ssl", "mtls"]
SECURITY_MODES: tuple[SecurityMode, ...] = ("plaintext", "sasl_ssl", "mtls")
CONTROLLER_ID = 100
JMX_AGENT_GLOB = "jmx_prometheus_javaagent-*.jar"
RULES_FILE = "jmx-rules.yaml"


class SandboxError(OffsetguardError):
    """The sandbox could not be set up, started, stopped or inspected."""


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """One node: its id, roles and loopback ports (``port`` is the client listener; a secured sandbox's
    brokers also have an ``internal_port``, see :mod:`.security`). In ZooKeeper mode the ZooKeeper server
    is a node too (roles ``zookeeper``, id 0, ``controller_port`` its client port)."""

    node_id: int
    roles: str  # "broker", "controller", "broker,controller" or "zookeeper"
    port: int | None
    controller_port: int | None
    metrics_port: int
    internal_port: int | None = None

    @property
    def name(self) -> str:
        if self.roles == "broker,controller":
            return f"node-{self.node_id}"
        if self.is_zookeeper:
            return "zookeeper"
        return f"{self.roles}-{self.node_id}"

    @property
    def is_broker(self) -> bool:
        return "broker" in self.roles

    @property
    def is_controller(self) -> bool:
        return "controller" in self.roles

    @property
    def is_zookeeper(self) -> bool:
        return self.roles == "zookeeper"


def sandbox_home() -> Path:
    """``deploy/sandbox``: env ``OFFSETGUARD_SANDBOX_HOME``, else found above this package, else ``./``."""
    env = os.environ.get("OFFSETGUARD_SANDBOX_HOME")
    if env:
        return Path(env).resolve()
    for parent in Path(__file__).resolve().parents:
        if (parent / "deploy" / "sandbox" / "pom.xml").is_file():
            return parent / "deploy" / "sandbox"
    return (Path.cwd() / "deploy" / "sandbox").resolve()


def jmx_agent(lib: Path) -> Path:
    """The Prometheus JMX exporter javaagent jar in ``lib``."""
    found = sorted(lib.glob(JMX_AGENT_GLOB))
    if not found:
        raise SandboxError(f"no {JMX_AGENT_GLOB} in {lib}")
    return found[-1]


LOWEST_PORT = 10_000  # sandbox ports are chosen from here up to the kernel's ephemeral range


def ephemeral_range() -> tuple[int, int]:
    """The kernel's ephemeral port range (Linux: ``ip_local_port_range``; the IANA range elsewhere)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 49152, 65535


_HANDED: set[int] = set()  # every port free_ports has handed out in this process
_HANDED_LOCK = threading.Lock()


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports that were free a moment ago (all held open while choosing).

    Chosen below the ephemeral range: a broker stopped for a while keeps its ports, and a port in the
    ephemeral range can meanwhile become the local end of any outgoing connection (a client's, another
    test's), so the restart would fail to bind. Outside it only an explicit bind can take the port. Nor
    is a port handed out twice by this process: two sandboxes started at once (each binds its ports only
    when its JVMs start) never get the same one.
    """
    low = ephemeral_range()[0]
    candidates = list(range(LOWEST_PORT, low)) if low - LOWEST_PORT >= 100 * count else []
    random.shuffle(candidates)
    with ExitStack() as stack, _HANDED_LOCK:
        ports: list[int] = []
        for port in candidates:
            if len(ports) == count:
                break
            if port in _HANDED:
                continue
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            try:
                sock.bind((HOST, port))
            except OSError:
                continue  # in use: the next candidate
            ports.append(port)
        while len(ports) < count:  # no room below the ephemeral range: any free port
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind((HOST, 0))
            ports.append(int(sock.getsockname()[1]))
        _HANDED.update(ports)
        return ports


def new_cluster_id() -> str:
    """A random cluster id as Kafka prints it: a UUID, base64url without padding, never starting '-'."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode("ascii")
        if not text.startswith("-"):
            return text


ZOOKEEPER_ID = 0


def plan_nodes(brokers: int, secured: bool = False, zookeeper: bool = False) -> list[NodeSpec]:
    """1 → one combined node (id 1); 3 (or any other count) → controller 100 plus brokers 1, 2, 3..., all
    on fresh ports (and an internal listener port per broker when ``secured``). ``zookeeper``: a ZooKeeper
    node (id 0) and broker nodes 1.. instead of any KRaft controller."""
    if brokers < 1:
        raise SandboxError(f"--brokers must be at least 1, not {brokers}")
    if brokers == 1 and not zookeeper:
        ports = free_ports(4 if secured else 3)
        return [NodeSpec(1, "broker,controller", ports[0], ports[1], ports[2], ports[3] if secured else None)]
    internal = secured and not zookeeper  # ZooKeeper-mode sandboxes are plaintext
    ports = free_ports(2 + 2 * brokers + (brokers if internal else 0))
    head_id, head_role = (ZOOKEEPER_ID, "zookeeper") if zookeeper else (CONTROLLER_ID, "controller")
    extra = ports[2 + 2 * brokers :]
    return [NodeSpec(head_id, head_role, None, ports[0], ports[1])] + [
        NodeSpec(i + 1, "broker", ports[2 + 2 * i], None, ports[3 + 2 * i], extra[i] if internal else None)
        for i in range(brokers)
    ]


def render_properties(
    node: NodeSpec,
    *,
    voters: str,
    data_dir: Path,
    broker_count: int,
    offsets_partitions: int,
    extra: Mapping[str, object] | None = None,
    secured: Mapping[str, object] | None = None,
    zookeeper_connect: str | None = None,
    share_groups: bool = True,
) -> str:
    """``node.properties`` for one node; ``voters`` is the static ``controller.quorum.voters`` value.

    ``secured``: the node's settings from :func:`.security.node_properties`; the broker listeners are then
    ``CLIENT`` (on ``port``) and ``INTERNAL`` (on ``internal_port``) instead of one PLAINTEXT listener.
    ``zookeeper_connect``: a ZooKeeper-mode broker (Kafka 3.x): ``broker.id`` and ``zookeeper.connect``
    instead of the KRaft roles, quorum and controller listener. ``share_groups``: the release has share
    groups' coordinator settings (4.x).

    ``extra`` broker settings (e.g. ``offsets.retention.minutes``) override the defaults on broker nodes.
    """
    if zookeeper_connect is not None:
        props: dict[str, object] = {
            "broker.id": node.node_id,
            "zookeeper.connect": zookeeper_connect,
            "zookeeper.session.timeout.ms": 6000,
            # tests stop a partition's last in-sync replica: its controlled shutdown cannot move that
            # leader and is retried 3 times 5 s apart (10 s per stop) before the broker shuts down anyway
            "controlled.shutdown.retry.backoff.ms": 500,
        }
    else:
        props = {
            "process.roles": node.roles,
            "node.id": node.node_id,
            "controller.quorum.voters": voters,
            "controller.listener.names": "CONTROLLER",
        }
    props.update(
        {"log.dirs": data_dir, "num.network.threads": 2, "num.io.threads": 2, "background.threads": 2}
    )
    listeners = []
    if node.is_broker and secured is not None:
        listeners += [f"CLIENT://{HOST}:{node.port}", f"INTERNAL://{HOST}:{node.internal_port}"]
    elif node.is_broker:
        listeners.append(f"PLAINTEXT://{HOST}:{node.port}")
    if node.is_controller:
        listeners.append(f"CONTROLLER://{HOST}:{node.controller_port}")
    props["listeners"] = ",".join(listeners)
    props["listener.security.protocol.map"] = "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
    # leaders stay where a test put them: no background preferred-leader election. In KRaft it is the
    # active controller's periodic task, read from the controller's own configuration (set on the brokers
    # only, a controller of its own still elected every 300 s: a truth cell's staged reordering was undone)
    props["auto.leader.rebalance.enable"] = "false"
    if node.is_broker:
        props.update(
            {
                "advertised.listeners": f"PLAINTEXT://{HOST}:{node.port}",
                "inter.broker.listener.name": "PLAINTEXT",
                "offsets.topic.replication.factor": min(broker_count, 3),
                "offsets.topic.num.partitions": offsets_partitions,
                "transaction.state.log.replication.factor": min(broker_count, 3),
                # min ISR 1: tests stop brokers and still need transactions to work
                "transaction.state.log.min.isr": 1,
                "group.initial.rebalance.delay.ms": 0,
                "num.partitions": 1,
                "num.replica.fetchers": 1,
                "log.cleaner.threads": 1,
                # the default 128 MiB dedupe buffer alone would take a quarter of the heap
                "log.cleaner.dedupe.buffer.size": 16 * 1024 * 1024,
                "replica.lag.time.max.ms": 10_000,
            }
        )
        if share_groups:
            props.update(
                {
                    "share.coordinator.state.topic.replication.factor": min(broker_count, 3),
                    "share.coordinator.state.topic.min.isr": 1,
                }
            )
        if zookeeper_connect is None:
            # tests stop and kill brokers: notice it in seconds, not the default 9 s
            props.update({"broker.heartbeat.interval.ms": 1000, "broker.session.timeout.ms": 6000})
    if secured is not None:
        props.update(secured)
    if node.is_broker and extra:
        props.update(extra)
    return "".join(f"{key}={value}\n" for key, value in props.items())


def render_zookeeper(node: NodeSpec, data_dir: Path) -> str:
    """A standalone ZooKeeper server on loopback (``controller_port`` is its client port)."""
    props: dict[str, object] = {
        "dataDir": data_dir,
        "clientPort": node.controller_port,
        "clientPortAddress": HOST,
        "maxClientCnxns": 0,
        "admin.enableServer": "false",
        "4lw.commands.whitelist": "ruok,srvr",
        "tickTime": 2000,
    }
    return "".join(f"{key}={value}\n" for key, value in props.items())


def quorum_voters(nodes: list[NodeSpec]) -> str:
    """Static quorum: ``id@127.0.0.1:port`` for every controller."""
    return ",".join(f"{n.node_id}@{HOST}:{n.controller_port}" for n in nodes if n.is_controller)


LOG4J2_NODE = """\
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.target = SYSTEM_OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.authorizer.name = kafka.authorizer.logger
logger.authorizer.level = WARN
"""

LOG4J2_TOOL = """\
status = warn
appender.err.type = Console
appender.err.name = ERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = ERR
"""

# Kafka 3.x logs through log4j 1 (reload4j): the same layout and levels as above.
LOG4J1_NODE = """\
log4j.rootLogger=INFO, out
log4j.appender.out=org.apache.log4j.ConsoleAppender
log4j.appender.out.Target=System.out
log4j.appender.out.layout=org.apache.log4j.PatternLayout
log4j.appender.out.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.kafka.authorizer.logger=WARN
"""

LOG4J1_TOOL = """\
log4j.rootLogger=WARN, err
log4j.appender.err=org.apache.log4j.ConsoleAppender
log4j.appender.err.Target=System.err
log4j.appender.err.layout=org.apache.log4j.PatternLayout
log4j.appender.err.layout.ConversionPattern=[%d] %p %m (%c)%n
"""
