"""Thinning to one row per bucket past the full-resolution window, and expiry past retention."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from collectors.model import CommittedObservation, CommittedOffset, OffsetsObservation, PartitionOffsets
from store import Store, ThinCounts, retention
from store.settings import StoreSettings

BUCKET = 600
HOUR = 3600.0
# Aligned to the bucket so the horizons (now - 1 h, now - 24 h) fall on bucket boundaries.
NOW = 2_833_336 * BUCKET * 1.0


@pytest.fixture
def store(settings: StoreSettings) -> Iterator[Store]:
    tuned = settings.model_copy(
        update={"full_resolution_hours": 1.0, "thinned_bucket_seconds": BUCKET, "retention_days": 1.0}
    )
    with Store.open(tuned) as opened:
        yield opened


def commit(store: Store, at: float, offset: int, group: str = "g", partitions: int = 1) -> None:
    offsets = tuple(CommittedOffset(group, "t", p, offset, 1) for p in range(partitions))
    store.record_committed(CommittedObservation("c1", at, offsets, (group,)))


def times(store: Store, group: str = "g") -> list[float]:
    return [p.observed_at for p in store.committed_history("c1", group)]


def test_thin_old_rows_keeps_last_per_bucket_and_last_before_retention(store: Store) -> None:
    start = NOW - 26 * HOUR
    for k in range(26 * 30):  # a change every 120 s for 26 hours: 5 rows per bucket
        commit(store, start + 120 * k, k)
    counts = store.thin(NOW)
    # 60 rows older than 24 h: all but the last expire. 23 h of 5-row buckets thin to 1 row each.
    assert counts == ThinCounts(
        committed_thinned=23 * 6 * 4, committed_expired=59, partitions_thinned=0, partitions_expired=0
    )
    kept = times(store)
    assert kept[0] == NOW - 24 * HOUR - 120  # the value in force at the retention horizon
    thinned = [t for t in kept if NOW - 24 * HOUR <= t < NOW - HOUR]
    assert len(thinned) == 23 * 6
    assert all(t % BUCKET == BUCKET - 120 for t in thinned)  # the last row of each bucket
    assert [t for t in kept if t >= NOW - HOUR] == [NOW - HOUR + 120 * k for k in range(30)]


def test_thin_repeated_pass_removes_nothing_more(store: Store) -> None:
    for k in range(100):
        commit(store, NOW - 3 * HOUR + 60 * k, k)
    assert store.thin(NOW).total > 0
    assert store.thin(NOW).total == 0


def test_thin_key_older_than_retention_keeps_its_newest_row(store: Store) -> None:
    commit(store, NOW - 10 * 24 * HOUR, 1, group="idle")
    for k in range(3):
        commit(store, NOW - 5 * 24 * HOUR + BUCKET * k, 10 + k, group="gone")
    counts = store.thin(NOW)
    assert (counts.committed_expired, counts.committed_thinned) == (2, 0)
    assert times(store, "idle") == [NOW - 10 * 24 * HOUR]
    assert [p.offset for p in store.committed_at("c1", "gone", NOW)] == [12]


def test_thin_expired_history_still_answers_offsets_inside_retention(store: Store) -> None:
    commit(store, NOW - 3 * 24 * HOUR, 5)
    commit(store, NOW - 2 * 24 * HOUR, 6)
    commit(store, NOW - 2 * HOUR, 7)
    store.thin(NOW)
    assert [p.offset for p in store.committed_at("c1", "g", NOW - 12 * HOUR)] == [6]
    assert [p.offset for p in store.latest_committed("c1", "g")] == [7]


def test_thin_partition_history_counted_separately(store: Store) -> None:
    for k in range(10):  # ten changes inside one bucket
        parts = (PartitionOffsets("t", 0, 0, 100 + k),)
        store.record_offsets(OffsetsObservation("c1", NOW - 2 * HOUR + 60 * k, parts))
    counts = store.thin(NOW)
    assert (counts.partitions_thinned, counts.partitions_expired, counts.committed_thinned) == (9, 0, 0)
    assert [p.log_end for p in store.partition_history("c1", "t")] == [109]


def test_thin_many_keys_across_chunks_all_thinned(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retention, "KEYS_PER_CHUNK", 2)
    commit(store, NOW - 2 * HOUR, 1, partitions=5)
    commit(store, NOW - 2 * HOUR + 60, 2, partitions=5)
    assert store.thin(NOW).committed_thinned == 5
    assert [p.offset for p in store.committed_history("c1", "g")] == [2] * 5
