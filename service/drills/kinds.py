"""The drill kinds: each acts on its own topic and group and says what it caused.

All are safe on a live cluster: they touch nothing but ``offsetguard-drill-*`` names. Offsets are
exact (one partition, records produced and acknowledged before the action), so each alert's magnitude is
known in advance and checked.
"""

from __future__ import annotations

import time

from alerts.model import (
    COMMITTED_BELOW_LOG_START,
    CONSUMER_STALLED,
    LAG_HIGH,
    OFFSET_REWIND,
    OFFSET_SKIP,
    OFFSETS_LOST,
)
from service.drills.kafka_io import DrillKafka
from service.drills.model import Caused
from service.drills.runner import Names, Options, Setup, Spec, Watch

RECORDS = 200
HIGH = 150  # where a group has read to before the incident
LOW = 50  # where a stopped group committed; what a rewind goes back to
DELETE_BEFORE = 120  # the log start retention moves to past LOW


def _setup(watch: Watch, names: Names, options: Options) -> Setup:
    """The drill's topic as the service sees it, before anything else is judged."""
    setup = Setup(watch, names, options.timeout_s)
    setup.topic()
    return setup


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
        # the member stays a moment: the service judges the rewind against a live, stable group
        time.sleep(2.0)
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
    ``auto.offset.reset=latest`` and commits the log end (200): 70 deleted unread, 80 skipped."""
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
            # skipped counts from the old offset: the deleted-unread ones are among them
            {"messages_deleted_unread": DELETE_BEFORE - LOW, "messages_skipped": landed - LOW},
        )
        time.sleep(2.0)
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
            cause="auto_reset_latest",
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
    )
}

ALL = "all"
# ``all``: every kind but stall, which waits the service's stall_seconds (15 minutes by default)
EVERY = [name for name in SPECS if name != "stall"]


def chosen(kinds: list[str]) -> list[str]:
    """The kinds to run for ``kinds`` as asked (``all`` expanded, repeats dropped, order kept)."""
    return list(EVERY) if ALL in kinds else list(dict.fromkeys(kinds))
