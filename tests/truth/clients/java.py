"""Kafka's own Java consumer as the harness runs it: ``kafka-console-consumer``
(``org.apache.kafka.tools.consumer.ConsoleConsumer``) from the sandbox jars, with its own defaults
(auto commit on, every 5 s, and a commit on close: SIGTERM runs its shutdown hook, which wakes the
consumer up and closes it).

``java-classic`` uses the classic group protocol, ``java-consumer`` the KIP-848 one
(``group.protocol=consumer``: the session timeout is then the broker's ``group.consumer.session.timeout.ms``,
45 s by default; the client may not set it). The tool prints ``Partition:P<TAB>Offset:O<TAB>VALUE`` a record
(and flushes after each); the parent's reader thread journals each line as it arrives. Assignments are seen
in the consumer's own INFO log: ``Adding newly assigned partitions: t-0, t-1`` (classic: the partitions
added) or the ``Assigned partitions: [t-0]`` line of ``Reconciling assignment`` (KIP-848: the whole
assignment). A standalone member (``assign``) is :data:`STANDALONE` instead (the console consumer refuses
``--group`` with ``--partition``): a KafkaConsumer that assigns itself the partitions with the group's
id, printing records as the console consumer does, its assignment as ``Standalone assigned partitions:
t-0`` (``java-consumer``: the same program with ``group.protocol=consumer``, i.e. the new
AsyncKafkaConsumer and its own commit path; a standalone consumer joins no group either way). The member's
log config lets the consumer internals' INFO through to stderr (joins, resets to
committed or reset offsets, commits that failed: all in ``<out>.log``), everything else at WARN.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from sandbox import jvm

CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
STANDALONE = Path(__file__).with_name("Standalone.java")
RECORD_LINE = re.compile(r"^Partition:(\d+)\tOffset:(\d+)\t(.*)$")
ASSIGNED_LINE = re.compile(r"Adding newly assigned partitions: ([^()]*?)\s*\(org\.apache")
RECONCILED_LINE = re.compile(r"^\s+Assigned partitions:\s*(\[.*\])\s*$")  # KIP-848: the whole assignment
STANDALONE_LINE = re.compile(r"^Standalone assigned partitions: (.*)$")
REVOKED_LINE = re.compile(
    r"(Revoke previously assigned|Lost previously assigned) partitions ([^()]*?)\s*\(org"
)
CONSUMER_LOGS = "org.apache.kafka.clients.consumer.internals"

LOG4J2 = f"""\
status = warn
appender.err.type = Console
appender.err.name = ERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = ERR
logger.internals.name = {CONSUMER_LOGS}
logger.internals.level = INFO
"""
LOG4J1 = f"""\
log4j.rootLogger=WARN, err
log4j.appender.err=org.apache.log4j.ConsoleAppender
log4j.appender.err.Target=System.err
log4j.appender.err.layout=org.apache.log4j.PatternLayout
log4j.appender.err.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.{CONSUMER_LOGS}=INFO
"""


def log_option(directory: Path, log4j2: bool) -> str:
    """The JVM flag for the member's log config (written into ``directory``)."""
    if log4j2:
        path = directory / "truth-consumer-log4j2.properties"
        path.write_text(LOG4J2)
        return f"-Dlog4j2.configurationFile={path}"
    path = directory / "truth-consumer-log4j.properties"
    path.write_text(LOG4J1)
    return f"-Dlog4j.configuration=file:{path}"


def command(
    lib: Path,
    log: str,
    *,
    client: str,
    bootstrap: str,
    group: str,
    topic: str,
    reset: str,
    allow_auto_create: bool,
    extra: dict[str, object],
    session_timeout_ms: int,
    heartbeat_interval_ms: int,
) -> list[str]:
    props: dict[str, object] = {
        "auto.offset.reset": reset,
        "allow.auto.create.topics": str(allow_auto_create).lower(),
        "client.id": f"truth-{client}",
    }
    if client == "java-consumer":
        props["group.protocol"] = "consumer"
    else:
        props["session.timeout.ms"] = session_timeout_ms
        props["heartbeat.interval.ms"] = heartbeat_interval_ms
    props.update(extra)
    args: list[str] = ["--bootstrap-server", bootstrap, "--topic", topic, "--group", group]
    for key in ("print.partition", "print.offset", "print.value"):
        args += ["--property", f"{key}=true"]
    for key, value in props.items():
        args += ["--consumer-property", f"{key}={value}"]
    return jvm.java_command(lib, CONSOLE_CONSUMER, args, (*jvm.TOOL_JVM_OPTS, log))


def standalone_command(
    lib: Path,
    log: str,
    *,
    client: str,
    bootstrap: str,
    group: str,
    topic: str,
    partitions: Sequence[int],
    reset: str,
    allow_auto_create: bool,
    extra: dict[str, object],
) -> list[str]:
    """:data:`STANDALONE` run from source: ``partitions`` of ``topic`` assigned, committing as ``group``."""
    props: dict[str, object] = {
        "allow.auto.create.topics": str(allow_auto_create).lower(),
        "client.id": f"truth-{client}",
    }
    if client == "java-consumer":
        props["group.protocol"] = "consumer"
    props.update(extra)
    args = [bootstrap, group, reset, topic, ",".join(map(str, partitions))]
    args += [f"{key}={value}" for key, value in props.items()]
    return jvm.java_command(lib, str(STANDALONE), args, (*jvm.TOOL_JVM_OPTS, log))


def parse_record(line: str) -> tuple[int, int, str] | None:
    m = RECORD_LINE.match(line)
    return (int(m[1]), int(m[2]), m[3]) if m else None


def parse_partitions(text: str) -> list[list[object]]:
    """``t-0, t-1`` (Java's TopicPartition.toString, comma separated) as ``[[t, 0], [t, 1]]``."""
    out: list[list[object]] = []
    for item in (s.strip() for s in text.strip().strip("[]").split(",")):
        if item:
            topic, _, partition = item.rpartition("-")
            out.append([topic, int(partition)])
    return sorted(out, key=lambda tp: (str(tp[0]), int(str(tp[1]))))


def rebalance_event(line: str) -> tuple[str, list[list[object]]] | None:
    """("assigned" | "revoked" | "lost", partitions) for a rebalance log line of the consumer."""
    if m := ASSIGNED_LINE.search(line) or RECONCILED_LINE.match(line) or STANDALONE_LINE.match(line):
        return "assigned", parse_partitions(m[1])
    if m := REVOKED_LINE.search(line):
        return ("lost" if m[1].startswith("Lost") else "revoked"), parse_partitions(m[2])
    return None


def unsupported(topics: Sequence[str]) -> str | None:
    """Why a Java member (the console consumer, or :data:`STANDALONE`) cannot read ``topics``, or None."""
    if len(topics) != 1:
        return "the Java members do not print a record's topic: one topic per Java member"
    return None
