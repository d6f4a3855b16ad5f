"""Real kafka-python consumers for the incident scenarios: a group member that reads and commits, and one
that commits where an ``auto.offset.reset`` put it (before processing, as at-least-once consumers do)."""

from __future__ import annotations

import time

import kafka.errors as kerr
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

from sandbox.cluster import SandboxCluster
from tests.support.group_consumer import GroupConsumer, subscribe


def group_consumer(
    kafka: SandboxCluster, group: str, reset: str = "earliest", **config: object
) -> KafkaConsumer:
    """A group member (subscribe with :func:`join`); see :class:`GroupConsumer` for the client bug it
    works around."""
    return GroupConsumer(
        bootstrap_servers=kafka.bootstrap_servers,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset=reset,
        session_timeout_ms=10_000,
        heartbeat_interval_ms=1000,
        # The rebalance timeout: how long the coordinator holds a JoinGroup for members that do not rejoin
        # (the default, 5 min, outlasts every wait here). These members poll every 200 ms.
        max_poll_interval_ms=20_000,
        **config,
    )


def join(consumer: KafkaConsumer, topic: str, timeout: float = 60) -> None:
    """Subscribe to ``topic`` (see :func:`tests.support.group_consumer.subscribe`)."""
    subscribe(consumer, [topic], timeout)


def commit_now(
    consumer: KafkaConsumer, offsets: dict[TopicPartition, OffsetAndMetadata] | None = None
) -> None:
    """``consumer.commit(offsets)``, retried while the group is rebalancing (polling with the partitions
    paused, so nothing is read meanwhile)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            consumer.commit(offsets)
            return
        except (kerr.RebalanceInProgressError, kerr.CommitFailedError, kerr.CoordinatorNotAvailableError):
            assert time.monotonic() < deadline, f"commit refused for 60 s: {_membership(consumer)}"
            assigned = consumer.assignment()
            consumer.pause(*assigned)
            consumer.poll(timeout_ms=200)
            consumer.resume(*assigned)


def _membership(consumer: KafkaConsumer) -> str:
    """The member's own view of its group and the coordinator's, for a failure message."""
    coordinator = consumer._coordinator
    group = coordinator.group_id
    admin = KafkaAdminClient(bootstrap_servers=consumer.config["bootstrap_servers"])
    try:
        broker = repr(admin.describe_groups([group]))[:2000]
    except kerr.KafkaError as exc:
        broker = f"not described: {exc!r}"
    finally:
        admin.close()
    task = coordinator._join_task
    round_ = "none" if task is None else f"done={task.is_done} error={task.exception!r}"
    conn = coordinator._manager._conns.get(coordinator.coordinator_id)
    wire = (
        "no connection"
        if conn is None
        else (
            f"{conn} in_flight={len(conn.in_flight_requests)} buffered={len(conn._request_buffer)}"
            f" paused={sorted(conn.paused)}"
        )
    )
    member = (
        f"{coordinator.state} {coordinator._generation} need_rejoin={coordinator.need_rejoin()}"
        f" rejoin_needed={coordinator.rejoin_needed} rejoining={coordinator.rejoining} join_task={round_}"
    )
    return f"member {member}; {wire}; coordinator {coordinator.coordinator_id}: {broker}"


def consume_and_commit(kafka: SandboxCluster, group: str, topic: str, upto: int, timeout: float = 60) -> None:
    """Join ``group`` on ``topic`` (one partition), read up to ``upto`` and commit it, then leave."""
    consumer = group_consumer(kafka, group)
    tp = TopicPartition(topic, 0)
    try:
        join(consumer, topic)
        deadline = time.monotonic() + timeout
        while not consumer.assignment() or consumer.position(tp) < upto:
            assert time.monotonic() < deadline, f"{group} did not reach {upto} on {topic}"
            consumer.poll(timeout_ms=200)
        assert consumer.position(tp) == upto
        commit_now(consumer)  # the consumed position, with the leader epoch of the last record read
    finally:
        consumer.close(autocommit=False)


def commit_reset_position(
    kafka: SandboxCluster, group: str, topic: str, reset: str, until_end: int, timeout: float = 90
) -> list[int]:
    """Join ``group`` with ``auto.offset.reset=reset`` and read up to ``until_end``; every poll first commits
    where the batch starts (the position the reset chose, before anything is processed), then the position
    after it. Returns the offsets committed, in order."""
    consumer = group_consumer(kafka, group, reset)
    tp = TopicPartition(topic, 0)
    committed: list[int] = []
    last: int | None = None

    def commit(offset: int) -> None:
        nonlocal last
        if offset != last:  # a consumer with nothing new to commit commits nothing
            commit_now(consumer, {tp: OffsetAndMetadata(offset, "", -1)})
            committed.append(offset)
            last = offset

    try:
        join(consumer, topic)
        found = consumer.committed(tp)
        last = found if isinstance(found, int) else None
        deadline = time.monotonic() + timeout
        while True:
            assert time.monotonic() < deadline, f"{group} did not reach {until_end}: committed {committed}"
            batch = consumer.poll(timeout_ms=200).get(tp, [])
            if batch:
                commit(batch[0].offset)
            if consumer.assignment():
                position = consumer.position(tp)
                commit(position)
                if position == until_end:  # not before: the committed offset may lie past it
                    return committed
    finally:
        consumer.close(autocommit=False)
