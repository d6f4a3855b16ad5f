"""The drill kinds: each acts on its own topic and group and says what it caused.

All but two are safe on a live cluster: they touch nothing but ``offsetguard-drill-*`` names. The unclean
election and the coordinator failover stop brokers, and run only on a sandbox. Offsets are
exact (one partition, records produced and acknowledged before the action), so each alert's magnitude is
known in advance and checked.
"""

from __future__ import annotations

import time

from alerts.model import (
    COMMITTED_BELOW_LOG_START,
    COMMITTED_BEYOND_LOG_END,
    CONSUMER_STALLED,
    LAG_HIGH,
    OFFSET_REWIND,
    OFFSET_SKIP,
    OFFSETS_LOST,
)
from drills.kafka_io import DrillKafka
from drills.model import Caused
from drills.runner import POLL_S, Names, Options, Setup, Spec, Watch

RECORDS = 200
HIGH = 150  # where a group has read to before the incident
LOW = 50  # where a stopped group committed; what a rewind goes back to
DELETE_BEFORE = 120  # the log start retention moves to past LOW
TRUNCATED_TO = 100  # the log end an unclean election goes back to, under HIGH
STAY_S = 2.0  # how long at most a member that moved its offset stays for the service to judge the move


def _setup(watch: Watch, names: Names, options: Options) -> Setup:
    """The drill's topic as the service sees it, before anything else is judged."""
    setup = Setup(watch, names, options.timeout_s)
    setup.topic()
    return setup


def _stay(watch: Watch, names: Names, kind: str, cause: str | None = None) -> None:
    """Keep the member a moment, so that the service judges its move against a live, stable group: until
    the service shows the alert the move raised (``kind``, and ``cause`` if given), at most :data:`STAY_S`."""
    deadline = time.monotonic() + STAY_S
    while time.monotonic() < deadline:
        if any(a["kind"] == kind and cause in (None, a["cause"]) for a in watch.alerts(names.group)):
            return
        time.sleep(POLL_S)


def rewind(kafka: DrillKafka, watch: Watch, names: Names, options: Options) -> Caused:
    """An active member that had read to 150 seeks back to 50 and commits: 100 messages replayed."""
    kafka.create_topic(names.topic)
    kafka.produce(names.topic, RECORDS)
    member = kafka.member(names.group, names.topic)
    try:
        member.join()
        member.commit(HIGH)
        _setup(watch, names, options).committed(HIGH)
        member.commit(LOW)
        caused = Caused(time.monotonic(), {"messages_replayed": HIGH - LOW})
        _stay(watch, names, OFFSET_REWIND)
        return caused
    finally:
        member.stop()


def retention_loss(kafka: DrillKafka, watch: Watch, names: Names, options: Options) -> Caused:
    """A stopped group at 50; retention (DeleteRecords) moves the log start to 120: 70 messages lost."""
    kafka.create_topic(names.topic)
    kafka.produce(names.topic, RECORDS)
    kafka.commit(names.group, names.topic, LOW)
    _setup(watch, names, options).committed(LOW)
    kafka.delete_records(names.topic, DELETE_BEFORE)
    return Caused(time.monotonic(), {"messages_lost": DELETE_BEFORE - LOW})


def skip(kafka: DrillKafka, watch: Watch, names: Names, options: Options) -> Caused:
    """A stopped group at 50, the log start moved to 120; its consumer comes back with
    ``auto.offset.reset=latest`` and commits the log end (200): 70 deleted unread, 80 skipped.

    The service sees 70 deleted unread for certain and at most 150 skipped: a consumer reset to the log
    start (120) that read to the end before committing would commit 200 as well, so the commits cannot
    tell the direction (``auto_reset_direction_unknown``), and the drill's own operation gives the service
    nothing else to tell it by."""
    kafka.create_topic(names.topic)
    kafka.produce(names.topic, RECORDS)
    kafka.commit(names.group, names.topic, LOW)
    setup = _setup(watch, names, options)
    setup.committed(LOW)
    kafka.delete_records(names.topic, DELETE_BEFORE)
    # the loss first (retention-loss's alert): detection has the range showing 50 unfetchable before the
    # consumer comes back, as it would after any real stop
    setup.alerted(COMMITTED_BELOW_LOG_START)
    member = kafka.member(names.group, names.topic, reset="latest")
    try:
        member.join()
        landed = member.commit_position(LOW)
        caused = Caused(
            time.monotonic(),
            # certain: the deleted-unread ones; at most, counted from the old offset: all of the jump
            {
                "messages_deleted_unread": DELETE_BEFORE - LOW,
                "messages_skipped": DELETE_BEFORE - LOW,
                "messages_skipped_max": landed - LOW,
            },
        )
        _stay(watch, names, OFFSET_SKIP, "auto_reset_direction_unknown")
        return caused
    finally:
        member.stop()


def offsets_removed(kafka: DrillKafka, watch: Watch, names: Names, options: Options) -> Caused:
    """A stopped group's committed offset deleted (OffsetDelete: the broker refuses it while a member
    subscribes to the topic, so no drill can remove offsets under an active member)."""
    kafka.create_topic(names.topic)
    kafka.produce(names.topic, RECORDS)
    kafka.commit(names.group, names.topic, HIGH)
    _setup(watch, names, options).committed(HIGH)
    kafka.delete_offsets(names.group, names.topic)
    return Caused(time.monotonic(), {"offsets_lost": 1})


def lag(kafka: DrillKafka, watch: Watch, names: Names, options: Options) -> Caused:
    """A stopped group at 0 while ``lag_messages`` records arrive: lag over the limit."""
    kafka.create_topic(names.topic)
    kafka.commit(names.group, names.topic, 0)
    _setup(watch, names, options).committed(0)
    kafka.produce(names.topic, options.lag_messages)
    return Caused(time.monotonic(), {"lag": options.lag_messages})


def stall(kafka: DrillKafka, watch: Watch, names: Names, options: Options) -> Caused:
    """A group whose committed offset stays put with a record waiting: stalled once the service's
    ``stall_seconds`` pass (15 minutes by default: give ``--timeout`` more than that)."""
    kafka.create_topic(names.topic)
    kafka.produce(names.topic, 1)
    kafka.commit(names.group, names.topic, 0)
    _setup(watch, names, options).committed(0)
    return Caused(time.monotonic(), {})


def unclean_election(kafka: DrillKafka, watch: Watch, names: Names, options: Options) -> Caused:
    """The recipe of KAFKA_NOTES, on the drill's topic: replicas [A, B], 100 records on both; B stops, 50
    more on A alone, the group commits 150; A stops, B starts and is elected uncleanly with log end 100;
    A comes back and truncates to it. The group's committed offset is 50 past the log end."""
    brokers = kafka.brokers(2)
    a, b = brokers.ids()[:2]
    kafka.create_topic(names.topic, on=[a, b])
    kafka.produce(names.topic, TRUNCATED_TO)
    setup = _setup(watch, names, options)
    setup.partition(leader=a, isr=[a, b], log_end=TRUNCATED_TO)
    try:
        brokers.stop(b)  # a controlled shutdown: the ISR shrinks to [A]
        setup.partition(isr=[a])
        kafka.produce(names.topic, HIGH - TRUNCATED_TO)  # acknowledged by A alone
        kafka.commit(names.group, names.topic, HIGH)
        setup.committed(HIGH)
        setup.partition(log_end=HIGH)
        brokers.stop(a)  # the last in-sync replica: the partition is offline
        brokers.start(b)  # out of sync: only an unclean election makes it the leader
        kafka.elect_unclean(names.topic)
        caused = Caused(time.monotonic(), {"beyond": HIGH - TRUNCATED_TO})
        brokers.start(a)  # rejoins as a follower and truncates its log to 100
        return caused
    finally:
        for broker in (a, b):
            if not brokers.alive(broker):
                brokers.start(broker)


def coordinator_failover(kafka: DrillKafka, watch: Watch, names: Names, options: Options) -> Caused:
    """An active member commits 100, then 200, always at the log end (no lag: nothing else to alert on);
    its group's coordinator stops (a controlled shutdown: the group moves to another broker, which loads
    its offsets from ``__consumer_offsets``) and the member commits again through the new one. Nothing
    may be lost or re-read (a stale offset loaded would read as a rewind to 100): no alert on the group,
    and the service follows the group to its new coordinator and back."""
    brokers = kafka.brokers(2)
    kafka.create_topic(names.topic)
    member = kafka.member(names.group, names.topic)
    stopped: int | None = None
    try:
        member.join()
        setup = _setup(watch, names, options)
        for offset in (RECORDS // 2, RECORDS):
            kafka.produce(names.topic, RECORDS // 2)
            member.commit(offset)
            setup.committed(offset)
        stopped = setup.coordinator()
        brokers.stop(stopped)
        at = time.monotonic()
        member.commit(RECORDS)
        moved_to = setup.coordinator(other_than=stopped)
        setup.committed(RECORDS)
        seen_in = time.monotonic() - at
        brokers.start(stopped)
        setup.committed(RECORDS)  # still there once the old coordinator is back
        magnitude = {"coordinator_before": stopped, "coordinator_after": moved_to, "committed": RECORDS}
        return Caused(at, magnitude, seen_in=seen_in)
    finally:
        if stopped is not None and not brokers.alive(stopped):
            brokers.start(stopped)
        member.stop()


_ANY = frozenset({"info", "warning", "critical"})
SPECS: dict[str, Spec] = {
    s.name: s
    for s in (
        Spec(
            "rewind", OFFSET_REWIND, frozenset({"critical"}), "an active member rewinds 100 messages", rewind
        ),
        Spec(
            "skip",
            OFFSET_SKIP,
            frozenset({"warning", "critical"}),
            "a reset to latest over deleted and unread messages",
            skip,
            # a landing on the log end: to latest, or to earliest read to the end (see skip())
            cause="auto_reset_direction_unknown",
        ),
        Spec(
            "retention-loss",
            COMMITTED_BELOW_LOG_START,
            frozenset({"warning", "critical"}),
            "retention deletes 70 messages a stopped group has not read",
            retention_loss,
        ),
        Spec(
            "offsets-removed",
            OFFSETS_LOST,
            frozenset({"info"}),
            "a stopped group's committed offset deleted",
            offsets_removed,
            cause="admin_offset_delete",
        ),
        Spec("lag", LAG_HIGH, frozenset({"warning", "critical"}), "lag past the limit", lag),
        Spec("stall", CONSUMER_STALLED, _ANY, "a committed offset stuck with records waiting", stall),
        Spec(
            "unclean-election",
            COMMITTED_BEYOND_LOG_END,
            frozenset({"critical"}),
            "an unclean election truncates 50 messages under a group's committed offset (sandbox)",
            unclean_election,
            brokers_needed=2,
        ),
        Spec(
            "coordinator-failover",
            None,
            frozenset(),
            "a group's coordinator stops under an active member: no alert, nothing lost (sandbox)",
            coordinator_failover,
            brokers_needed=2,
        ),
    )
}

ALL = "all"
# ``all``: every kind safe on a live cluster but stall, which waits the service's stall_seconds (15 minutes
# by default)
EVERY = [name for name, spec in SPECS.items() if spec.live_safe and name != "stall"]


def chosen(kinds: list[str]) -> list[str]:
    """The kinds to run for ``kinds`` as asked (``all`` expanded, repeats dropped, order kept)."""
    return list(EVERY) if ALL in kinds else list(dict.fromkeys(kinds))
