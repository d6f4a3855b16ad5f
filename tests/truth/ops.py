"""The operators' tools, run as operators run them: Kafka's own command-line classes from the sandbox jars
(``kafka-consumer-groups``, ``kafka-topics``, ``kafka-delete-records``, ``kafka-leader-election``,
``kafka-reassign-partitions``) through :meth:`SandboxCluster.run_tool`, against a plaintext sandbox.

Every function raises :class:`ToolError` (with the tool's output) when the tool fails. Kafka 4.1's
``kafka-consumer-groups`` exits 0 even when it refused (``Error: ...`` on stdout), so the output is checked
too, not only the exit status.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import kafka.errors as kerr
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic

from sandbox.cluster import SandboxCluster

GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
TOPICS = "org.apache.kafka.tools.TopicCommand"
DELETE_RECORDS = "org.apache.kafka.tools.DeleteRecordsCommand"
LEADER_ELECTION = "org.apache.kafka.tools.LeaderElectionCommand"
REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"

TOOL_TIMEOUT = 120.0
COORDINATOR_WAIT = 60.0  # a coordinator loading or moving answers again within this
RESET_MODES = (
    "to-earliest",
    "to-latest",
    "to-current",
    "to-offset",
    "shift-by",
    "to-datetime",
    "by-duration",
    "from-file",
)
VALUE_MODES = ("to-offset", "shift-by", "to-datetime", "by-duration", "from-file")
Election = Literal["preferred", "unclean"]
ERROR_LINE = re.compile(r"^\s*Error\b.*$", re.MULTILINE | re.IGNORECASE)


class ToolError(RuntimeError):
    """A Kafka tool failed or refused; the message has its command line, exit status and output."""

    def __init__(self, what: str, returncode: int, stdout: str, stderr: str) -> None:
        super().__init__(f"{what}: exit {returncode}\n{stdout.strip()}\n{stderr.strip()}".strip())
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr


def run(cluster: SandboxCluster, main_class: str, *args: str, timeout: float = TOOL_TIMEOUT) -> str:
    """Run the tool, return its stdout; :class:`ToolError` on a non-zero exit or an ``Error`` line."""
    done = cluster.run_tool(
        main_class, "--bootstrap-server", cluster.bootstrap_servers, *args, timeout=timeout
    )
    what = f"{main_class.rsplit('.', 1)[-1]} {' '.join(args)}"
    if done.returncode != 0 or ERROR_LINE.search(done.stdout) or ERROR_LINE.search(done.stderr):
        raise ToolError(what, done.returncode, done.stdout, done.stderr)
    return done.stdout


def _json_file(content: Any, stem: str) -> Path:
    with tempfile.NamedTemporaryFile(
        "w", prefix=f"truth-{stem}-", suffix=".json", delete=False, encoding="utf-8"
    ) as f:
        json.dump(content, f)
    return Path(f.name)


# ---------------------------------------------------------------------------------------- consumer groups
@dataclass(frozen=True)
class GroupRow:
    """One row of ``kafka-consumer-groups --describe`` (None where the tool prints ``-``)."""

    group: str
    topic: str
    partition: int
    current_offset: int | None
    log_end_offset: int | None
    lag: int | None
    consumer_id: str | None
    host: str | None
    client_id: str | None


@dataclass(frozen=True)
class PlannedOffset:
    """One row of ``--reset-offsets`` output: where the tool put (or, without --execute, would put) it."""

    group: str
    topic: str
    partition: int
    new_offset: int


def _num(text: str) -> int | None:
    return None if text == "-" else int(text)


def _text(text: str) -> str | None:
    return None if text == "-" else text


def describe_group(cluster: SandboxCluster, group: str) -> list[GroupRow]:
    """``--describe --group``: one row per partition the group has an offset for (or is assigned)."""
    rows: list[GroupRow] = []
    for line in run(cluster, GROUPS, "--describe", "--group", group).splitlines():
        fields = line.rsplit(maxsplit=8)
        if len(fields) != 9 or not fields[2].isdigit():
            continue  # the header, blank lines, "has no active members"
        g, topic, partition, current, end, lag, member, host, client = fields
        rows.append(
            GroupRow(
                g,
                topic,
                int(partition),
                _num(current),
                _num(end),
                _num(lag),
                *map(_text, (member, host, client)),
            )
        )
    return rows


def committed_offsets(
    cluster: SandboxCluster, group: str, timeout: float = COORDINATOR_WAIT
) -> dict[tuple[str, int], int]:
    """The group's committed offsets by (topic, partition), from the OffsetFetch API (no JVM: quick).

    A coordinator still loading its ``__consumer_offsets`` partition, or one that moved, answers with a
    retriable error (COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR): asked again until ``timeout``, as a
    consumer would, so a caller polling for a commit is not ended by a broker catching up.
    """
    deadline = time.monotonic() + timeout
    while True:
        admin = KafkaAdminClient(**cluster.client_config())
        try:
            got = admin.list_group_offsets(group)[group]
            break
        except kerr.KafkaError as e:
            if not e.retriable or time.monotonic() > deadline:
                raise
        finally:
            admin.close()
        time.sleep(0.5)
    return {(tp.topic, tp.partition): om.offset for tp, om in got.items() if om.offset >= 0}


def reset_offsets(
    cluster: SandboxCluster,
    group: str,
    topic: str | None,
    mode: str,
    value: str | int | None = None,
    execute: bool = True,
    *,
    partitions: Sequence[int] | None = None,
) -> list[PlannedOffset]:
    """``--reset-offsets --<mode> [value] (--execute | --dry-run)`` on ``topic`` (its ``partitions``
    only, if given; None: ``--all-topics``, or the topics of the file for ``from-file``).

    ``mode``: ``to-earliest``, ``to-latest``, ``to-current``, ``to-offset N``, ``shift-by ±N``,
    ``to-datetime YYYY-MM-DDTHH:mm:SS.sss`` (a zone suffix allowed), ``by-duration PnDTnHnMnS``,
    ``from-file CSV`` (with or without the leading ``--``). Returns the tool's plan (the new offsets).
    """
    mode = mode.removeprefix("--")
    if mode not in RESET_MODES:
        raise ValueError(f"unknown reset mode {mode!r}: one of {RESET_MODES}")
    if (value is None) == (mode in VALUE_MODES):
        raise ValueError(f"--{mode} {'needs' if value is None else 'takes no'} value")
    args = ["--group", group, "--reset-offsets", f"--{mode}"]
    if value is not None:
        args.append(str(value))
    if mode != "from-file":
        if topic is None:
            args.append("--all-topics")
        else:
            args += ["--topic", topic if partitions is None else f"{topic}:{','.join(map(str, partitions))}"]
    args.append("--execute" if execute else "--dry-run")
    plan: list[PlannedOffset] = []
    for line in run(cluster, GROUPS, *args).splitlines():
        fields = line.rsplit(maxsplit=3)
        if len(fields) == 4 and fields[2].isdigit() and fields[3].lstrip("-").isdigit():
            plan.append(PlannedOffset(fields[0], fields[1], int(fields[2]), int(fields[3])))
    return plan


def delete_group(cluster: SandboxCluster, group: str) -> str:
    """``--delete --group``: the group and all its offsets (refused while it has members)."""
    return run(cluster, GROUPS, "--delete", "--group", group)


def delete_offsets(
    cluster: SandboxCluster, group: str, topic: str, partitions: Sequence[int] | None = None
) -> str:
    """``--delete-offsets --group --topic``: the group's offsets of ``topic`` (refused for partitions of a
    topic the group's members are subscribed to)."""
    where = topic if partitions is None else f"{topic}:{','.join(map(str, partitions))}"
    out = run(cluster, GROUPS, "--delete-offsets", "--group", group, "--topic", where)
    refused = [
        line
        for line in out.splitlines()
        if len(line.split()) >= 3 and line.split()[1].isdigit() and line.split()[2] != "Successful"
    ]
    if refused:
        raise ToolError(f"delete offsets of {group} on {where}", 0, out, "")
    return out


# ---------------------------------------------------------------------------------------- topics
def create_topic(
    cluster: SandboxCluster,
    topic: str,
    partitions: int = 1,
    replication: int = 1,
    configs: Mapping[str, str | int] | None = None,
    assignment: Mapping[int, Sequence[int]] | None = None,
    *,
    wait: bool = True,
) -> str:
    """``kafka-topics --create`` (``assignment``: partition -> replicas, the first the preferred leader;
    it then decides the partitions and the replication); ``wait``: until every partition has a leader."""
    args = ["--create", "--topic", topic]
    if assignment is None:
        args += ["--partitions", str(partitions), "--replication-factor", str(replication)]
    else:
        args += ["--replica-assignment", _assignment(assignment)]
    for key, value in (configs or {}).items():
        args += ["--config", f"{key}={value}"]
    out = run(cluster, TOPICS, *args)
    if wait:
        wait_topic(
            cluster,
            topic,
            lambda d: bool(d["partitions"]) and all(p["leader_id"] >= 0 for p in d["partitions"]),
        )
    return out


def create_topic_request(
    cluster: SandboxCluster,
    topic: str,
    partitions: int = 1,
    replication: int = 1,
    configs: Mapping[str, str | int] | None = None,
    assignment: Mapping[int, Sequence[int]] | None = None,
) -> None:
    """The CreateTopics request ``kafka-topics --create`` sends, sent from this process (no JVM to start:
    a scene's own topics, where creating them is not the operation under test); waits as
    :func:`create_topic` does, until every partition has a leader."""
    new = NewTopic(
        topic,
        num_partitions=-1 if assignment is not None else partitions,
        replication_factor=-1 if assignment is not None else replication,
        replica_assignments={p: list(r) for p, r in assignment.items()} if assignment is not None else None,
        topic_configs={k: str(v) for k, v in (configs or {}).items()},
    )
    admin = KafkaAdminClient(**cluster.client_config())
    try:
        admin.create_topics([new])
    finally:
        admin.close()
    wait_topic(
        cluster, topic, lambda d: bool(d["partitions"]) and all(p["leader_id"] >= 0 for p in d["partitions"])
    )


def _assignment(assignment: Mapping[int, Sequence[int]]) -> str:
    return ",".join(":".join(map(str, assignment[p])) for p in sorted(assignment))


def add_partitions(
    cluster: SandboxCluster,
    topic: str,
    total: int,
    assignment: Mapping[int, Sequence[int]] | None = None,
) -> str:
    """``kafka-topics --alter --partitions total`` (``assignment``: replicas of the new partitions)."""
    args = ["--alter", "--topic", topic, "--partitions", str(total)]
    if assignment is not None:
        args += ["--replica-assignment", _assignment(assignment)]
    out = run(cluster, TOPICS, *args)
    wait_topic(cluster, topic, lambda d: len(d["partitions"]) >= total)
    return out


def set_topic_configs(cluster: SandboxCluster, topic: str, configs: Mapping[str, str]) -> None:
    """Set ``configs`` on ``topic`` (what ``kafka-configs --alter --add-config`` asks of the brokers)."""
    admin = KafkaAdminClient(**cluster.client_config())
    try:
        result = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs=dict(configs))])
    finally:
        admin.close()
    failed = [outcome for by_name in result.values() for outcome in by_name.values() if _failed(outcome)]
    if failed:
        raise ToolError(f"set configs of {topic}", 1, "", repr(failed))


def _failed(outcome: object) -> bool:
    return isinstance(outcome, BaseException) or (
        isinstance(outcome, type) and issubclass(outcome, Exception)
    )


def delete_topic(cluster: SandboxCluster, topic: str, *, wait: bool = True) -> str:
    """``kafka-topics --delete``; ``wait``: until the brokers' metadata no longer has it."""
    out = run(cluster, TOPICS, "--delete", "--topic", topic)
    if wait:
        wait_topic(cluster, topic, None)
    return out


def describe_topic(cluster: SandboxCluster, topic: str) -> dict[str, Any] | None:
    """The Metadata API's view of ``topic`` (kafka-python's describe_topics row); None: no such topic."""
    admin = KafkaAdminClient(**cluster.client_config())
    try:
        found = admin.describe_topics([topic])
    finally:
        admin.close()
    row: dict[str, Any] | None = next((d for d in found if d["name"] == topic and not d["error_code"]), None)
    return row


def wait_topic(cluster: SandboxCluster, topic: str, ready: Any, timeout: float = 60.0) -> None:
    """Until ``ready(description)`` holds (``ready`` None: until the topic is gone)."""
    deadline = time.monotonic() + timeout
    while True:
        described = describe_topic(cluster, topic)
        if (described is None) if ready is None else (described is not None and ready(described)):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"topic {topic}: {'still there' if ready is None else 'not ready'}: {described}"
            )
        time.sleep(0.2)


def delete_records(cluster: SandboxCluster, topic: str, partition: int, offset: int) -> int:
    """``kafka-delete-records --offset-json-file``: records before ``offset`` (-1: all); the new low
    watermark."""
    plan = {"version": 1, "partitions": [{"topic": topic, "partition": partition, "offset": offset}]}
    path = _json_file(plan, "delete-records")
    try:
        out = run(cluster, DELETE_RECORDS, "--offset-json-file", str(path))
    finally:
        path.unlink(missing_ok=True)
    m = re.search(rf"partition: {re.escape(topic)}-{partition}\s+low_watermark: (\d+)", out)
    if m is None:
        raise ToolError(f"delete records of {topic}-{partition} before {offset}", 0, out, "")
    return int(m[1])


# ---------------------------------------------------------------------------------------- replicas
Target = str | tuple[str, int] | Sequence[str | tuple[str, int]]


def _targets(cluster: SandboxCluster, target: Target) -> list[tuple[str, int]]:
    """Partitions named by ``target``: a topic (every partition), a (topic, partition), or a list of those."""
    items = [target] if isinstance(target, str | tuple) else list(target)
    out: list[tuple[str, int]] = []
    for item in items:
        if isinstance(item, tuple):
            out.append((item[0], int(item[1])))
            continue
        described = describe_topic(cluster, item)
        if described is None:
            raise ValueError(f"no topic {item}")
        out += sorted((item, int(p["partition_index"])) for p in described["partitions"])
    return out


def elect_leaders(
    cluster: SandboxCluster,
    target: Target,
    election: Election = "preferred",
    *,
    partition: int | None = None,
) -> str:
    """``kafka-leader-election --election-type PREFERRED|UNCLEAN`` for ``target`` (a topic: all its
    partitions, or ``partition`` of it; a (topic, partition); or a list of those). A preferred election
    for a partition whose preferred leader already leads is not a failure ("Valid replica already
    elected"); any other per-partition error raises."""
    if election not in ("preferred", "unclean"):
        raise ValueError(f"unknown election type {election!r}")
    parts = (
        [(target, partition)]
        if isinstance(target, str) and partition is not None
        else _targets(cluster, target)
    )
    plan = {"partitions": [{"topic": t, "partition": p} for t, p in parts]}
    path = _json_file(plan, "elect")
    try:
        out = run(
            cluster, LEADER_ELECTION, "--election-type", election.upper(), "--path-to-json-file", str(path)
        )
    finally:
        path.unlink(missing_ok=True)
    return out


def reassign(
    cluster: SandboxCluster,
    topic: str,
    partition: int,
    replicas: Sequence[int],
    *,
    timeout: float = 120.0,
) -> str:
    """``kafka-reassign-partitions --execute``, then ``--verify`` until the reassignment is complete (the
    verify also lifts any throttle); the last verify's output."""
    plan = {
        "version": 1,
        "partitions": [
            {
                "topic": topic,
                "partition": partition,
                "replicas": list(replicas),
                "log_dirs": ["any"] * len(replicas),
            }
        ],
    }
    path = _json_file(plan, "reassign")
    try:
        run(cluster, REASSIGN, "--reassignment-json-file", str(path), "--execute")
        deadline = time.monotonic() + timeout
        while True:
            out = run(cluster, REASSIGN, "--reassignment-json-file", str(path), "--verify")
            if re.search(rf"Reassignment of partition {re.escape(topic)}-{partition} is completed", out):
                return out
            if "failed" in out.lower():
                raise ToolError(f"reassign {topic}-{partition} to {list(replicas)}", 0, out, "")
            if time.monotonic() > deadline:
                raise TimeoutError(f"reassign {topic}-{partition} to {list(replicas)} not done: {out}")
            time.sleep(1.0)
    finally:
        path.unlink(missing_ok=True)
