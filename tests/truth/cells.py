"""The truth matrix's cells: an operation, a client, a group kind and an ``auto.offset.reset``.

Each scenario does to its own topic and group what an operator or an incident does, with the real client
of the cell reading (journaling each record it processed) and Kafka's own tools operating, and ends with
the group's consumers stopped. What really happened is worked out afterwards from the journals
(:mod:`tests.truth.oracle`), never from offsetguard's rules.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from alerts.state import PartitionKey
from tests.e2e.harness import wait_for
from tests.truth import ops
from tests.truth.clients import Member
from tests.truth.clients.member import STOP_TIMEOUT
from tests.truth.stage import Stage

CLIENTS = ("kafka-python", "aiokafka", "librdkafka", "java-classic", "java-consumer")
BY_DURATION_START = 3  # seconds added to reset-offsets --by-duration for the tool's start (see there)
BY_DURATION_GAP = 10.0  # seconds after the time it resets to, before the second batch (see there)
CLOSE_ON_DELETED = 10.0  # seconds a member whose topic is gone for good gets to close (KIP-848's took 6)


@dataclass(frozen=True)
class CellSpec:
    operation: str
    client: str
    group_kind: str  # "active" (members running through it), "empty" (Empty with history), "standalone"
    reset: str = "earliest"
    variant: str = ""

    @property
    def id(self) -> str:
        op = f"{self.operation}-{self.variant}" if self.variant else self.operation
        return f"{op}.{self.client}.{self.group_kind}.{self.reset}"


# ---------------------------------------------------------------------------------------- building blocks


def read_to(stage: Stage, spec: CellSpec, group: str, topic: str, upto: int) -> None:
    """A member of ``group`` reads ``topic[0]`` from the start up to ``upto`` and stops cleanly, its commit at
    ``upto``: the group is then Empty with history (standalone: a group that only ever committed). Whatever
    the cell's ``auto.offset.reset``, this first member reads from the start (it was there before the
    messages); the cell's reset applies when the group comes back."""
    m = _member(stage, spec, group, topic, reset="earliest")  # it was there from the start
    m.wait_read(0, upto - 1, 90)
    m.stop()
    wait_for(lambda: _committed(stage, group, topic) == upto, 60, f"{group} committed {upto}")


def _member(
    stage: Stage,
    spec: CellSpec,
    group: str,
    topic: str,
    *,
    reset: str | None = None,
    allow_auto_create: bool = False,
) -> Member:
    mode = "assign" if spec.group_kind == "standalone" else "subscribe"
    return stage.member(
        spec.client,
        group,
        [topic],
        reset=reset or spec.reset,
        mode=mode,
        partitions=[0] if mode == "assign" else None,
        allow_auto_create=allow_auto_create,
    )


def _committed(stage: Stage, group: str, topic: str) -> int | None:
    rows = ops.committed_offsets(stage.kafka, group)
    return rows.get((topic, 0))


def resume(stage: Stage, spec: CellSpec, group: str, topic: str) -> Member:
    """The group's consumer comes back and reads until it has read a message produced after it started
    (fed a few at a time: a reset to latest positions at whatever the log end is when it looks)."""
    m = _member(stage, spec, group, topic)
    feed_until_read(stage, m, topic)
    return m


def feed_until_read(stage: Stage, m: Member, topic: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while True:
        batch = stage.produce(topic, 3)
        first = batch[0].offset
        step = time.monotonic() + 1.5
        while time.monotonic() < step:
            if any(r.topic == topic and r.offset >= first for r in m.reads()):
                m.wait_read(0, batch[-1].offset, 60)
                return
            time.sleep(0.1)
        assert time.monotonic() < deadline, f"{stage.cell}: {m} read nothing new on {topic}"


def sees(stage: Stage, topic: str, **want: object) -> None:
    wait_for(lambda: stage.runtime.sees_partition(topic, 0, **want), 60, f"offsetguard sees {topic} {want}")


def judged(stage: Stage, topic: str, **want: object) -> None:
    """Until detection has evaluated a cycle with the partition so (its state, not only the collectors'
    latest observation): what a scenario waits for before the group's next move."""

    def check() -> bool:
        for d in stage.runtime.runtime.detections:
            point = d.state.partitions.get(PartitionKey(topic, 0))
            if point is not None and all(getattr(point, k) == v for k, v in want.items()):
                return True
        return False

    wait_for(check, 60, f"detection judged {topic} with {want}")


def sees_commit(stage: Stage, group: str, topic: str, offset: int) -> None:
    wait_for(
        lambda: stage.runtime.sees_commit(group, topic, 0, offset),
        60,
        f"offsetguard sees {group} at {offset}",
    )


def topic_gone(stage: Stage, topic: str) -> None:
    def gone() -> bool:
        meta = stage.runtime.metadata()
        return meta is not None and meta.topic(topic) is None

    wait_for(gone, 60, f"offsetguard sees {topic} deleted")


# ---------------------------------------------------------------------------------------- the scenarios


def retention_delete_records(stage: Stage, spec: CellSpec) -> None:
    """A stopped group at 40; 60 more written; ``delete-records`` to 70 deletes 30 it never read; the group
    comes back with its ``auto.offset.reset``."""
    t, g = stage.create_topic(stage.name("t")), stage.name("g")
    stage.watch(g, t)
    stage.produce(t, 40)
    read_to(stage, spec, g, t, 40)
    stage.produce(t, 60)
    sees_commit(stage, g, t, 40)
    ops.delete_records(stage.kafka, t, 0, 70)
    judged(stage, t, log_start=70)
    resume(stage, spec, g, t)


def retention_time(stage: Stage, spec: CellSpec) -> None:
    """Time retention (12 s, 1 s segments) passes a stopped group while a producer writes on. The retention
    is set once the group has read its 40: a member slow to start (a JVM on a loaded machine) must not find
    them deleted already."""
    t = stage.create_topic(stage.name("t"), configs={"segment.ms": "1000"})
    g = stage.name("g")
    stage.watch(g, t)
    stage.produce(t, 40)
    read_to(stage, spec, g, t, 40)
    ops.set_topic_configs(stage.kafka, t, {"retention.ms": "12000", "segment.ms": "1000"})
    deadline = time.monotonic() + 90
    while not _log_start_past(stage, t, 45):
        assert time.monotonic() < deadline, f"{stage.cell}: retention did not pass 45 on {t}"
        stage.produce(t, 2)
        time.sleep(0.5)
    resume(stage, spec, g, t)


def _log_start_past(stage: Stage, topic: str, offset: int) -> bool:
    """Whether detection has judged the partition with its log start past ``offset``."""
    for d in stage.runtime.runtime.detections:
        point = d.state.partitions.get(PartitionKey(topic, 0))
        if point is not None and point.log_start is not None and point.log_start > offset:
            return True
    return False


def topic_deleted(stage: Stage, spec: CellSpec) -> None:
    """The group's topic is deleted: while it is Empty (caught up, or 200 behind), or under a running,
    caught-up member (which may re-create it: ``variant`` auto-create-on / auto-create-off)."""
    t, g = stage.create_topic(stage.name("t")), stage.name("g")
    stage.watch(g, t)
    stage.produce(t, 50)
    if spec.group_kind == "active":
        m = _member(stage, spec, g, t, allow_auto_create=spec.variant == "auto-create-on")
        m.wait_read(0, 49, 90)
        wait_for(lambda: _committed(stage, g, t) == 50, 60, f"{g} commits 50")
        sees_commit(stage, g, t, 50)
        ops.delete_topic(stage.kafka, t, wait=False)  # the member may re-create it at once
        time.sleep(8)  # the member notices (and re-creates the topic, if it may)
        # Not allowed to re-create it, the member cannot commit on close: the broker refuses a commit to a
        # topic it does not have, and the classic Java consumer retries that until its close timeout
        # (request.timeout.ms, 30 s) and was killed at the harness's 30 s. What it read is journaled already.
        m.stop(CLOSE_ON_DELETED if spec.variant == "auto-create-off" else STOP_TIMEOUT)
        return
    read_to(stage, spec, g, t, 50)
    if spec.variant == "behind":
        stage.produce(t, 200)
    sees_commit(stage, g, t, 50)
    # as it had been for a while before an operator deletes it: detection has judged it so
    judged(stage, t, log_end=250 if spec.variant == "behind" else 50)
    ops.delete_topic(stage.kafka, t)
    topic_gone(stage, t)


def topic_recreated(stage: Stage, spec: CellSpec) -> None:
    """An operator deletes and re-creates the topic of an Empty group; 30 new messages; the group returns."""
    t, g = stage.create_topic(stage.name("t")), stage.name("g")
    stage.watch(g, t)
    stage.produce(t, 50)
    read_to(stage, spec, g, t, 50)
    sees_commit(stage, g, t, 50)
    ops.delete_topic(stage.kafka, t)
    topic_gone(stage, t)
    stage.create_topic(t, tool=True)  # the operator's kafka-topics --create
    stage.produce(t, 30)
    resume(stage, spec, g, t)


def reset_offsets(stage: Stage, spec: CellSpec) -> None:
    """``kafka-consumer-groups --reset-offsets --<variant> --execute`` (or ``--delete``,
    ``--delete-offsets``) on a stopped group that had read everything; forward moves get 200 unread first.
    The group then comes back and reads on."""
    t, g = stage.create_topic(stage.name("t")), stage.name("g")
    stage.watch(g, t)
    mode = spec.variant
    between = 0.0
    if mode in ("to-datetime", "by-duration"):
        stage.produce(t, 50)
        time.sleep(3)
        between = time.time()
        time.sleep(BY_DURATION_GAP if mode == "by-duration" else 3)
        stage.produce(t, 50)
    else:
        stage.produce(t, 100)
    read_to(stage, spec, g, t, 100)
    if mode in ("to-latest", "shift-by-forward"):
        stage.produce(t, 200)
    sees_commit(stage, g, t, 100)
    value: str | None = None
    if mode == "to-offset":
        value = "30"
    elif mode == "shift-by-back":
        value = "-25"
    elif mode == "shift-by-forward":
        value = "25"
    elif mode == "to-datetime":
        value = datetime.fromtimestamp(between, UTC).strftime("%Y-%m-%dT%H:%M:%S.000")
    elif mode == "by-duration":
        # The tool subtracts the duration from its own clock, a JVM start later (1-5 s, longer on busy
        # cores): 3 s more puts its target within the gap (3 s before ``between``, BY_DURATION_GAP after)
        # for a start of 0.5-12.5 s (with 0 more, a start over 3 s passed the second 50, and the reset
        # moved nothing; with a 3 s gap after, so did a start over 5.5 s with the cells started together)
        value = f"PT{round(time.time() - between) + BY_DURATION_START}S"
    elif mode == "from-file":
        csv = stage.root / f"{stage.cell}-plan.csv"
        csv.write_text(f"{t},0,10\n")
        value = str(csv)
    if mode == "delete":
        ops.delete_group(stage.kafka, g)
    elif mode == "delete-offsets":
        ops.delete_offsets(stage.kafka, g, t)
    else:
        ops.reset_offsets(
            stage.kafka,
            g,
            t,
            mode.replace("shift-by-back", "shift-by").replace("shift-by-forward", "shift-by"),
            value,
        )
    # offsetguard sees the move (or the deletion) while the group is still stopped
    wait_for(lambda: not stage.runtime.sees_commit(g, t, 0, 100), 60, f"offsetguard sees {g} leave 100")
    resume(stage, spec, g, t)


def offset_delete_active(stage: Stage, spec: CellSpec) -> None:
    """``--delete-offsets`` while a member consumes the topic: the coordinator refuses it."""
    t, g = stage.create_topic(stage.name("t")), stage.name("g")
    stage.watch(g, t)
    stage.produce(t, 30)
    m = _member(stage, spec, g, t)
    m.wait_read(0, 29, 90)
    try:
        ops.delete_offsets(stage.kafka, g, t)
        stage.note("--delete-offsets under an active member was accepted")
    except ops.ToolError as exc:
        stage.note(f"--delete-offsets refused: {str(exc).splitlines()[-1][:200]}")
    feed_until_read(stage, m, t)


SCENARIOS: dict[str, Callable[[Stage, CellSpec], None]] = {
    "retention-delete-records": retention_delete_records,
    "retention-time": retention_time,
    "topic-deleted": topic_deleted,
    "topic-recreated": topic_recreated,
    "reset-offsets": reset_offsets,
    "offset-delete-active": offset_delete_active,
}
