"""What operators do every day, one function per operation; the soak's schedule cycles through them.

Each returns a short description of what it did. ``outage`` and ``quorum_loss`` make the monitor blind
for a while: the schedule records their windows (``collector_failure`` there is expected)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from kafka import TopicPartition
from kafka.admin import NewTopic

from bench.serve_proc import until
from bench.soak.world import World, retrying, tool_commit
from tests.truth.ops import committed_offsets

PREFERRED = 0  # ElectLeaders election type


@dataclass(frozen=True)
class Timing:
    """How long the slow operations take (short for the suite's version)."""

    settle: float  # after a member or broker restart, before the next one
    outage: float  # every broker down
    quorum_loss: float  # the only controller down


def rolling_restart_consumers(world: World, timing: Timing) -> str:
    """Restart each member of a two-member group in turn (two rebalances, the group never empty)."""
    group = _next(world, "rolling", world.free(at_least=2))
    for i, member in enumerate(list(world.groups[group])):
        if i:
            time.sleep(timing.settle)  # the group rebalanced after the previous restart
        world.members.restart(member)
    return group


def scale_out(world: World, timing: Timing) -> str:
    group = _next(world, "scale_out", world.free(members=1))
    return f"{group} +{world.new_member(group)}"


def scale_in(world: World, timing: Timing) -> str:
    """Stop the newest member of a group that has more than one (a rebalance)."""
    group = _next(world, "scale_in", world.free(at_least=2))
    member = world.groups[group].pop()
    world.members.stop(member)
    return f"{group} -{member}"


def rolling_restart_brokers(world: World, timing: Timing) -> str:
    for broker_id in sorted(world.cluster.brokers):
        world.cluster.stop_broker(broker_id)
        world.cluster.start_broker(broker_id)
        time.sleep(timing.settle)  # replicas catch up before the next one goes
    return "brokers " + ",".join(map(str, sorted(world.cluster.brokers)))


def restart_controller(world: World, timing: Timing) -> str:
    world.cluster.restart_controller()
    return f"controller {world.cluster.controller_id}"


def preferred_election(world: World, timing: Timing) -> str:
    admin = world.admin()
    try:
        admin.elect_leaders(PREFERRED, None, raise_errors=False)
    finally:
        admin.close()
    return "all partitions"


def reassign(world: World, timing: Timing) -> str:
    """AlterPartitionReassignments of one partition: its replica list rotated (the preferred leader
    moves to the next broker), then a preferred election for it; waits until nothing is reassigning."""
    topic = next(t for t in world.topics if t.startswith("soak-moving"))
    admin = world.admin()
    try:
        [desc] = admin.describe_topics([topic])
        parts = sorted(desc["partitions"], key=lambda p: p["partition_index"])
        part = parts[_count(world, "reassign") % len(parts)]
        replicas = [int(r) for r in part["replica_nodes"]]
        moved = [*replicas[1:], replicas[0]]
        tp = TopicPartition(topic, part["partition_index"])
        admin.alter_partition_reassignments({tp: moved})
        deadline = time.monotonic() + 120
        while admin.list_partition_reassignments() and time.monotonic() < deadline:
            time.sleep(1)
        admin.elect_leaders(PREFERRED, {topic: [tp.partition]}, raise_errors=False)
    finally:
        admin.close()
    return f"{topic}[{tp.partition}] {replicas} -> {moved}"


def topic_churn(world: World, timing: Timing) -> str:
    """Create a topic nobody consumes and delete an unused one (the newest spare)."""
    admin = world.admin()
    try:
        new = f"soak-new-{uuid.uuid4().hex[:6]}"
        admin.create_topics([NewTopic(new, 1, 3)])
        world.spare_topics.append(new)
        gone = world.spare_topics.pop(0)
        admin.delete_topics([gone])
    finally:
        admin.close()
    return f"+{new} -{gone}"


def delete_group_offsets(world: World, timing: Timing) -> str:
    """An admin tool commits offsets for a group of its own on two unconsumed topics (nothing there for
    retention to delete unread), then, once the monitor shows them, deletes one topic's with
    OffsetDelete (the broker allows it: no member subscribes)."""
    group = _next(world, "offset_delete", world.tool_groups)
    first, second = world.spare_topics[-2:]
    tool_commit(world.cluster, group, {(first, 0): 0, (second, 0): 0})
    _until_monitor_sees(world, group, {(first, 0): 0, (second, 0): 0}, timing.settle)
    admin = world.admin()
    try:
        admin.delete_group_offsets(group, [TopicPartition(second, 0)])
    finally:
        admin.close()
    return f"{group} {second}[0]"


def retire_group(world: World, timing: Timing) -> str:
    """Stop every member of a group, wait until it is Empty, and delete it (DeleteGroups)."""
    group = world.free(members=1)[0]
    for member in world.groups.pop(group):
        world.members.stop(member)
    # what it had not committed is no longer the group's to read (bench.soak.truth)
    world.retired[group] = (time.time(), committed_offsets(world.cluster, group))
    admin = world.admin()
    try:
        retrying(lambda: admin.delete_groups([group]))  # refused until the members' leave is processed
    finally:
        admin.close()
    return group


def outage(world: World, timing: Timing) -> str:
    """Every broker down for ``timing.outage`` seconds (controlled shutdown), then started again."""
    for broker_id in sorted(world.cluster.brokers):
        world.cluster.stop_broker(broker_id)
    time.sleep(timing.outage)
    for broker_id in sorted(world.cluster.brokers):
        world.cluster.start_broker(broker_id)
    return f"all brokers down {timing.outage:.0f} s"


def quorum_loss(world: World, timing: Timing) -> str:
    """The controller quorum (one voter) down for ``timing.quorum_loss`` seconds: brokers keep serving
    but no metadata can change."""
    world.cluster.stop_controller()
    time.sleep(timing.quorum_loss)
    world.cluster.start_controller()
    return f"controller quorum lost {timing.quorum_loss:.0f} s"


Operation = Callable[[World, Timing], str]
SCHEDULE: tuple[Operation, ...] = (
    rolling_restart_consumers,
    scale_out,
    preferred_election,
    topic_churn,
    rolling_restart_brokers,
    delete_group_offsets,
    reassign,
    scale_in,
    restart_controller,
    preferred_election,
    retire_group,
    outage,
    rolling_restart_consumers,
    quorum_loss,
)
BLIND = {outage.__name__, quorum_loss.__name__}


def _until_monitor_sees(
    world: World, group: str, offsets: dict[tuple[str, int], int], settle: float, timeout: float = 120.0
) -> None:
    """Until the monitor shows every commit of ``offsets`` (:class:`RuntimeError` after ``timeout``); with no
    monitor to ask, ``settle`` seconds."""
    seen = world.monitor_committed
    if seen is None:
        time.sleep(settle)
        return
    until(
        lambda: all(seen(group, t, p) == o for (t, p), o in offsets.items()),
        timeout,
        f"{group}: the monitor shows the commits {offsets}",
    )


def _count(world: World, what: str) -> int:
    world.counters[what] = world.counters.get(what, -1) + 1
    return world.counters[what]


def _next(world: World, what: str, choices: list[str]) -> str:
    if not choices:
        raise RuntimeError(f"{what}: nothing to choose from")
    return sorted(choices)[_count(world, what) % len(choices)]
