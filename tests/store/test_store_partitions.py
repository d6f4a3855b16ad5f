"""Partition log bounds and leadership: change-only history, merging metadata, time lookups."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from collectors.model import ClusterMetadata, OffsetsObservation, PartitionInfo, PartitionOffsets, TopicInfo
from store import Store
from store.settings import StoreSettings

T0 = 1_700_000_000.0


def offsets(at: float, *parts: PartitionOffsets) -> OffsetsObservation:
    return OffsetsObservation("c1", at, parts)


def po(
    log_end: int,
    partition: int = 0,
    *,
    log_start: int = 0,
    leader: int | None = None,
    epoch: int | None = None,
) -> PartitionOffsets:
    return PartitionOffsets("t", partition, log_start, log_end, leader, epoch)


def metadata(at: float, *parts: tuple[int, int | None, int]) -> ClusterMetadata:
    infos = tuple(PartitionInfo("t", p, leader, epoch, (1, 2), (1, 2)) for p, leader, epoch in parts)
    return ClusterMetadata("c1", at, "id", 1, (), (TopicInfo("t", False, infos),))


def states(store: Store) -> list[tuple[float, int | None, int | None, int | None, int | None]]:
    return [
        (p.observed_at, p.log_start, p.log_end, p.leader, p.leader_epoch)
        for p in store.partition_history("c1", "t")
    ]


def test_record_offsets_only_changes_write_rows(store: Store) -> None:
    assert store.record_offsets(offsets(T0, po(100))).history_rows == 1
    assert store.record_offsets(offsets(T0 + 5, po(100))).history_rows == 0
    assert store.record_offsets(offsets(T0 + 10, po(150))).history_rows == 1
    assert store.record_offsets(offsets(T0 + 15, po(150, log_start=20))).history_rows == 1
    assert states(store) == [
        (T0, 0, 100, None, None),
        (T0 + 10, 0, 150, None, None),
        (T0 + 15, 20, 150, None, None),
    ]
    [latest] = store.latest_partitions("c1")
    assert (latest.log_end, latest.changed_at, latest.last_seen_at) == (150, T0 + 15, T0 + 15)


def test_record_offsets_unchanged_advances_last_seen(store: Store) -> None:
    store.record_offsets(offsets(T0, po(100)))
    store.record_offsets(offsets(T0 + 5, po(100)))
    [latest] = store.latest_partitions("c1", "t")
    assert (latest.changed_at, latest.last_seen_at) == (T0, T0 + 5)


def test_record_metadata_leader_carried_into_offsets_rows(store: Store) -> None:
    store.record_metadata(metadata(T0, (0, 1, 4)))
    store.record_offsets(offsets(T0 + 5, po(100)))  # leader/epoch unset: keep metadata's
    assert store.record_metadata(metadata(T0 + 10, (0, 1, 4))).history_rows == 0
    store.record_metadata(metadata(T0 + 15, (0, 2, 5)))
    assert states(store) == [
        (T0, None, None, 1, 4),
        (T0 + 5, 0, 100, 1, 4),
        (T0 + 15, 0, 100, 2, 5),
    ]


def test_record_offsets_leader_when_set_overrides_metadata(store: Store) -> None:
    store.record_metadata(metadata(T0, (0, 1, 4)))
    store.record_offsets(offsets(T0 + 5, po(100, leader=3, epoch=6)))
    assert states(store)[-1] == (T0 + 5, 0, 100, 3, 6)


def test_record_metadata_offline_partition_stores_no_leader(store: Store) -> None:
    store.record_metadata(metadata(T0, (0, 1, 4)))
    assert store.record_metadata(metadata(T0 + 5, (0, None, 4))).history_rows == 1
    assert states(store)[-1] == (T0 + 5, None, None, None, 4)


def test_partition_history_range_and_partition_filter(store: Store) -> None:
    for i in range(4):
        store.record_offsets(offsets(T0 + 10 * i, po(100 + i, 0), po(200 + i, 1)))
    ranged = store.partition_history("c1", "t", partition=1, since=T0 + 10, until=T0 + 20)
    assert [(p.partition, p.log_end) for p in ranged] == [(1, 201), (1, 202)]
    assert store.partition_history("c1", "other") == ()


def test_partition_at_returns_state_at_or_before_time(store: Store) -> None:
    store.record_offsets(offsets(T0, po(100)))
    store.record_offsets(offsets(T0 + 10, po(150)))
    assert store.partition_at("c1", "t", 0, T0 - 1) is None
    at = store.partition_at("c1", "t", 0, T0 + 9)
    assert at is not None and (at.observed_at, at.log_end) == (T0, 100)
    at = store.partition_at("c1", "t", 0, T0 + 10)
    assert at is not None and at.log_end == 150


def test_log_end_reached_at_returns_first_observation_at_or_past_offset(store: Store) -> None:
    for i, end in enumerate((100, 120, 140, 160)):
        store.record_offsets(offsets(T0 + 10 * i, po(end)))
    assert store.log_end_reached_at("c1", "t", 0, 90) == T0
    assert store.log_end_reached_at("c1", "t", 0, 121) == T0 + 20
    assert store.log_end_reached_at("c1", "t", 0, 140) == T0 + 20
    assert store.log_end_reached_at("c1", "t", 0, 161) is None
    assert store.log_end_reached_at("c1", "t", 0, 150, until=T0 + 20) is None
    assert store.log_end_reached_at("c1", "other", 0, 1) is None


def test_log_end_reached_at_after_truncation_counts_only_current_run(store: Store) -> None:
    store.record_offsets(offsets(T0, po(100)))
    store.record_offsets(offsets(T0 + 10, po(20)))  # truncated (unclean election, topic re-created)
    store.record_offsets(offsets(T0 + 20, po(60)))
    assert store.log_end_reached_at("c1", "t", 0, 50) == T0 + 20
    assert store.log_end_reached_at("c1", "t", 0, 90) is None
    assert store.log_end_reached_at("c1", "t", 0, 50, until=T0 + 5) == T0


def test_range_samples_both_ends_known_ms_by_partition_then_time(store: Store) -> None:
    store.record_offsets(offsets(T0 + 5, po(150, 1, log_start=10)))
    store.record_offsets(offsets(T0, po(100)))
    store.record_offsets(offsets(T0 + 10, po(120)))
    store.record_metadata(metadata(T0 + 2, (2, 1, 0)))  # a partition whose log range was never seen
    store.record_offsets(OffsetsObservation("c2", T0, (PartitionOffsets("t", 0, 0, 7),)))

    assert store.range_samples("c1") == [
        ("c1", "t", 0, int(T0 * 1000), 0, 100),
        ("c1", "t", 0, int((T0 + 10) * 1000), 0, 120),
        ("c1", "t", 1, int((T0 + 5) * 1000), 10, 150),
    ]
    assert [r[0] for r in store.range_samples()] == ["c1", "c1", "c1", "c2"]
    within = store.range_samples("c1", since=T0 + 1, until=T0 + 9)
    assert within == [("c1", "t", 1, int((T0 + 5) * 1000), 10, 150)]


def test_reopened_cache_keeps_one_copy_of_each_name(settings: StoreSettings) -> None:
    """SQLite hands out a copy of a name per row; the latest-values cache read at open keeps one."""
    with Store.open(settings) as store:
        store.record_offsets(offsets(T0, po(100, 0), po(50, 1)))
    with Store.open(settings) as store:
        (c1, t1, _), (c2, t2, _) = sorted(store._partitions._latest)
        assert (c1, t1) == ("c1", "t") and c1 is c2 and t1 is t2


def _history_and_latest(store: Store) -> tuple[list[object], list[object]]:
    history = [
        (p.partition, p.observed_at, p.log_start, p.log_end, p.leader, p.leader_epoch)
        for p in store.partition_history("c1", "t")
    ]
    latest = [
        (p.partition, p.log_start, p.log_end, p.leader, p.leader_epoch, p.changed_at, p.last_seen_at)
        for p in store.latest_partitions("c1")
    ]
    return history, latest


def test_record_offsets_same_objects_write_what_fresh_copies_write(tmp_path: Path) -> None:
    """The offsets collector hands an unchanged partition as the same object: planning only the new objects
    writes the very rows (and last-seen times) that planning every partition of copies does, through a
    metadata write in between, a partition no longer listed, an older observation and a new order."""
    a, b, c = po(100, 0, leader=1, epoch=3), po(200, 1, leader=1, epoch=3), po(300, 2, leader=1, epoch=3)
    b2, c2 = po(250, 1, leader=1, epoch=3), po(301, 2, leader=1, epoch=3)
    steps: list[OffsetsObservation | ClusterMetadata] = [
        offsets(T0, a, b, c),
        offsets(T0 + 5, a, b, c),
        offsets(T0 + 10, a, b2, c),
        metadata(T0 + 12, (0, 2, 4), (1, 1, 3), (2, 1, 3)),  # a's leader moved: the next plan walks all
        offsets(T0 + 15, a, b2, c),  # a as before: its leader (set) overrides the metadata's again
        offsets(T0 + 20, a, b2, c2),
        offsets(T0 + 25, a, b2),  # c no longer listed: its last-seen time written
        offsets(T0 + 30, a, b2),
        offsets(T0 + 22, a, b2),  # an older observation
        offsets(T0 + 35, b2, a),  # another order
        offsets(T0 + 40, b2, a),
        offsets(T0 + 45, a, b, c),  # b and c back to older values
    ]
    counts: dict[str, list[int]] = {}
    seen: dict[str, tuple[list[object], list[object]]] = {}
    for name, copied in (("same", False), ("copies", True)):
        with Store.open(StoreSettings(path=tmp_path / f"{name}.db")) as store:
            counts[name] = []
            for step in steps:
                if isinstance(step, ClusterMetadata):
                    counts[name].append(store.record_metadata(step).history_rows)
                    continue
                if copied:
                    step = replace(step, partitions=tuple(replace(p) for p in step.partitions))
                counts[name].append(store.record_offsets(step).history_rows)
            seen[name] = _history_and_latest(store)  # (last-seen times as the store's readers see them)
    assert counts["same"] == counts["copies"] == [3, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 2]
    assert seen["same"] == seen["copies"]
    assert [p[0] for p in seen["same"][1]] == [0, 1, 2]
