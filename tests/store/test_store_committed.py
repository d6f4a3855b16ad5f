"""Committed offsets: change-only history, deletions, latest values and point-in-time reads."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import replace

import pytest

from collectors.errors import StoreError
from collectors.model import CommittedObservation, CommittedOffset, Failure
from store import CommittedPoint, Store, db
from store.settings import StoreSettings

T0 = 1_700_000_000.0


def obs(
    at: float, *offsets: CommittedOffset, groups: tuple[str, ...] = ("g",), cluster: str = "c1"
) -> CommittedObservation:
    return CommittedObservation(cluster, at, offsets, groups)


def off(
    offset: int,
    partition: int = 0,
    *,
    group: str = "g",
    topic: str = "t",
    epoch: int | None = 1,
    meta: str = "",
) -> CommittedOffset:
    return CommittedOffset(group, topic, partition, offset, epoch, meta)


def offsets_of(points: tuple[CommittedPoint, ...]) -> list[tuple[int, float, int | None]]:
    return [(p.partition, p.observed_at, p.offset) for p in points]


def test_record_committed_unchanged_value_writes_no_row_but_advances_last_seen(store: Store) -> None:
    store.record_committed(obs(T0, off(10)))
    counts = store.record_committed(obs(T0 + 5, off(10)))
    assert counts.history_rows == 0
    assert offsets_of(store.committed_history("c1", "g")) == [(0, T0, 10)]
    [latest] = store.latest_committed("c1", "g")
    assert (latest.offset, latest.changed_at, latest.last_seen_at) == (10, T0, T0 + 5)


def test_record_committed_offset_or_epoch_change_writes_row(store: Store) -> None:
    store.record_committed(obs(T0, off(10, epoch=1)))
    assert store.record_committed(obs(T0 + 5, off(11, epoch=1))).history_rows == 1
    assert store.record_committed(obs(T0 + 10, off(11, epoch=2))).history_rows == 1
    history = store.committed_history("c1", "g")
    assert [(p.observed_at, p.offset, p.leader_epoch) for p in history] == [
        (T0, 10, 1),
        (T0 + 5, 11, 1),
        (T0 + 10, 11, 2),
    ]


def test_record_committed_metadata_only_change_writes_no_row(store: Store) -> None:
    store.record_committed(obs(T0, off(10, meta="a")))
    assert store.record_committed(obs(T0 + 5, off(10, meta="b"))).history_rows == 0
    assert [p.metadata for p in store.committed_history("c1", "g")] == ["a"]


def test_record_committed_offset_gone_from_fetched_group_recorded_as_deletion(store: Store) -> None:
    store.record_committed(obs(T0, off(10, 0), off(20, 1)))
    counts = store.record_committed(obs(T0 + 5, off(10, 0)))
    assert (counts.deletions, counts.history_rows) == (1, 1)
    assert offsets_of(store.committed_history("c1", "g", partition=1)) == [(1, T0, 20), (1, T0 + 5, None)]
    assert [p.partition for p in store.latest_committed("c1", "g")] == [0]
    deleted = [p for p in store.latest_committed("c1", "g", include_deleted=True) if p.partition == 1]
    assert [(p.offset, p.changed_at) for p in deleted] == [(None, T0 + 5)]


def test_record_committed_group_without_offsets_fetched_deletes_all(store: Store) -> None:
    store.record_committed(obs(T0, off(10, 0), off(20, 1)))
    assert store.record_committed(obs(T0 + 5, groups=("g",))).deletions == 2
    assert store.latest_committed("c1", "g") == ()


def test_record_committed_group_not_fetched_is_not_deleted(store: Store) -> None:
    store.record_committed(obs(T0, off(10, group="a"), off(20, group="b"), groups=("a", "b")))
    # "b" failed to fetch: it is absent from `groups` and must keep its offsets.
    counts = store.record_committed(obs(T0 + 5, off(10, group="a"), groups=("a",)))
    assert counts.deletions == 0
    [latest] = store.latest_committed("c1", "b")
    assert (latest.offset, latest.last_seen_at) == (20, T0)
    assert offsets_of(store.committed_history("c1", "b")) == [(0, T0, 20)]


def test_record_committed_topic_hidden_by_an_acl_keeps_its_offsets_unconfirmed(store: Store) -> None:
    store.record_committed(obs(T0, off(10, topic="t"), off(20, topic="secret")))
    hidden = Failure("topic", "secret", "KafkaAuthError", "committed offsets not seen: not authorized")
    later = replace(obs(T0 + 5, off(11, topic="t")), failures=(hidden,))
    counts = store.record_committed(later)
    assert counts.deletions == 0
    latest = {p.topic: p for p in store.latest_committed("c1", "g")}
    assert (latest["secret"].offset, latest["secret"].last_seen_at) == (20, T0)  # not seen, not deleted
    assert (latest["t"].offset, latest["t"].last_seen_at) == (11, T0 + 5)
    assert store.committed_topics("c1") == ("secret", "t")
    # seen again, without the failure: gone for real this time
    assert store.record_committed(obs(T0 + 10, off(11, topic="t"))).deletions == 1
    assert store.committed_topics("c1") == ("t",)


def test_record_committed_deleted_offset_reappearing_writes_row(store: Store) -> None:
    store.record_committed(obs(T0, off(10)))
    store.record_committed(obs(T0 + 5))
    assert store.record_committed(obs(T0 + 10)).history_rows == 0  # still deleted: nothing new
    assert store.record_committed(obs(T0 + 15, off(3))).history_rows == 1
    assert offsets_of(store.committed_history("c1", "g")) == [(0, T0, 10), (0, T0 + 5, None), (0, T0 + 15, 3)]


def test_record_committed_repeated_group_changes_nothing_beside_a_changed_one(store: Store) -> None:
    a = (off(10, 0, group="a"), off(11, 1, group="a"))
    b = (off(20, 0, group="b"), off(21, 1, group="b"))
    store.record_committed(obs(T0, *a, *b, groups=("a", "b")))
    # "a" is handed on unchanged (the collector's decoded objects, as for an idle group); "b" moved and
    # lost a partition
    counts = store.record_committed(obs(T0 + 5, *a, off(22, 0, group="b"), groups=("a", "b")))
    assert (counts.history_rows, counts.deletions) == (2, 1)
    assert (
        store.record_committed(obs(T0 + 10, *a, off(22, 0, group="b"), groups=("a", "b"))).history_rows == 0
    )
    # "a" not fetched (a failed fetch), then fetched again without its partition 1: deleted then
    assert store.record_committed(obs(T0 + 15, off(22, 0, group="b"), groups=("b",))).deletions == 0
    assert store.record_committed(obs(T0 + 20, a[0], off(22, 0, group="b"), groups=("a", "b"))).deletions == 1
    assert [(p.partition, p.offset) for p in store.latest_committed("c1", "a")] == [(0, 10)]
    assert [(p.partition, p.offset) for p in store.latest_committed("c1", "b")] == [(0, 22)]
    assert offsets_of(store.committed_history("c1", "a", partition=1)) == [(1, T0, 11), (1, T0 + 20, None)]


def test_record_committed_groups_out_of_order_are_planned_whole(store: Store) -> None:
    first = (off(10, 0, group="a"), off(20, 0, group="b"), off(11, 1, group="a"))
    store.record_committed(obs(T0, *first, groups=("a", "b")))
    assert store.record_committed(obs(T0 + 5, *first, groups=("a", "b"))).history_rows == 0
    counts = store.record_committed(
        obs(T0 + 10, first[0], first[1], off(12, 1, group="a"), groups=("a", "b"))
    )
    assert (counts.history_rows, counts.deletions) == (1, 0)
    assert offsets_of(store.committed_history("c1", "a", partition=1)) == [(1, T0, 11), (1, T0 + 10, 12)]


def test_record_committed_other_cluster_same_group_kept_apart(store: Store) -> None:
    store.record_committed(obs(T0, off(10), cluster="c1"))
    store.record_committed(obs(T0, cluster="c2"))  # c2's "g" has no offsets: nothing of c1 deleted
    assert [p.offset for p in store.latest_committed("c1", "g")] == [10]
    assert store.clusters() == ("c1",)


def test_committed_at_between_changes_returns_value_in_force(store: Store) -> None:
    store.record_committed(obs(T0, off(10, 0), off(20, 1)))
    store.record_committed(obs(T0 + 10, off(11, 0), off(20, 1)))
    store.record_committed(obs(T0 + 20, off(11, 0)))  # partition 1 deleted
    assert store.committed_at("c1", "g", T0 - 1) == ()
    assert offsets_of(store.committed_at("c1", "g", T0 + 9.9)) == [(0, T0, 10), (1, T0, 20)]
    assert offsets_of(store.committed_at("c1", "g", T0 + 10)) == [(0, T0 + 10, 11), (1, T0, 20)]
    assert offsets_of(store.committed_at("c1", "g", T0 + 25)) == [(0, T0 + 10, 11)]


def test_committed_history_range_and_filters_inclusive(store: Store) -> None:
    for i in range(5):
        store.record_committed(obs(T0 + 10 * i, off(i, 0), off(100 + i, 1, topic="u")))
    ranged = store.committed_history("c1", "g", topic="t", since=T0 + 10, until=T0 + 30)
    assert offsets_of(ranged) == [(0, T0 + 10, 1), (0, T0 + 20, 2), (0, T0 + 30, 3)]
    assert {p.topic for p in store.committed_history("c1", "g", topic="u", partition=1)} == {"u"}
    assert len(store.committed_history("c1", "g")) == 10
    assert store.committed_history("c1", "other") == ()


def test_groups_and_clusters_list_what_was_stored(store: Store) -> None:
    store.record_committed(obs(T0, off(1, group="b"), off(1, group="a"), groups=("a", "b", "empty")))
    store.record_committed(obs(T0, off(1, group="z"), groups=("z",), cluster="c0"))
    assert store.groups("c1") == ("a", "b")
    assert store.clusters() == ("c0", "c1")


def test_record_committed_after_reopen_compares_with_stored_values(settings: StoreSettings) -> None:
    with Store.open(settings) as store:
        store.record_committed(obs(T0, off(10, 0), off(20, 1)))
    with Store.open(settings) as store:
        counts = store.record_committed(obs(T0 + 5, off(10, 0), off(21, 1), off(5, 2)))
        assert (counts.history_rows, counts.new_keys) == (2, 1)
        assert store.record_committed(obs(T0 + 10, off(10, 0))).deletions == 2


def test_record_committed_failed_write_is_retried_by_next_observation(
    settings: StoreSettings,
    monkeypatch: pytest.MonkeyPatch,
    hold_write_lock: Callable[[], AbstractContextManager[None]],
) -> None:
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 50)
    with Store.open(settings) as store:
        store.record_committed(obs(T0, off(10)))
        moved = obs(T0 + 5, off(11))
        with hold_write_lock(), pytest.raises(StoreError) as caught:
            store.record_committed(moved)
        assert caught.value.cluster == "c1"
        # The failed write must not have reached the cache, or this change would be skipped (nor be
        # remembered as written: the same offsets tuple comes again, as the tail-fed view hands it).
        assert store.record_committed(replace(moved, observed_at=T0 + 10)).history_rows == 1
        assert offsets_of(store.committed_history("c1", "g")) == [(0, T0, 10), (0, T0 + 10, 11)]


def test_reopened_cache_keeps_one_copy_of_each_name(settings: StoreSettings) -> None:
    """SQLite hands out a copy of a name per row; the latest-values cache read at open keeps one (a fleet's
    50,000 group-partitions name a few thousand groups and topics)."""
    with Store.open(settings) as store:
        store.record_committed(obs(T0, off(10, 0), off(20, 1), off(5, 0, group="h"), groups=("g", "h")))
    with Store.open(settings) as store:
        latest = store._committed._latest
        (c1, g), (c2, h) = sorted(latest)
        (t0, _), (t1, _) = sorted(latest[c1, g])
        [(t2, _)] = latest[c2, h]
        assert (c1, g, h) == ("c1", "g", "h") and c1 is c2 and t0 is t1 is t2


def test_record_committed_the_same_offsets_tuple_again_writes_no_row_but_advances_last_seen(
    store: Store,
) -> None:
    # the tail-fed committed offsets hand the very same tuple while nothing moved
    first = obs(T0, off(10), off(20, 1))
    store.record_committed(first)
    counts = store.record_committed(replace(first, observed_at=T0 + 5))
    assert (counts.history_rows, counts.new_keys, counts.deletions) == (0, 0, 0)
    assert [(p.partition, p.last_seen_at) for p in store.latest_committed("c1", "g")] == [
        (0, T0 + 5),
        (1, T0 + 5),
    ]
    # the same tuple, now fetched for a group more that has none in it: planned whole (deleted)
    store.record_committed(obs(T0 + 10, off(5, group="h"), off(10), off(20, 1), groups=("g", "h")))
    without = obs(T0 + 15, off(10), off(20, 1), groups=("g",))  # h not fetched: kept
    assert store.record_committed(without).deletions == 0
    assert store.record_committed(replace(without, observed_at=T0 + 20, groups=("g", "h"))).deletions == 1
    assert store.latest_committed("c1", "h") == ()
