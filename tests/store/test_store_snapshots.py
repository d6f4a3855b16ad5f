"""The store's snapshot index: add, list by cluster/group, get, delete."""

from __future__ import annotations

import dataclasses

import pytest

from collectors.errors import StoreError
from collectors.snapshots import SnapshotInfo, new_id
from store import Store
from store.migrations import MIGRATIONS


def info(n: int, cluster: str = "c1", group: str = "g1", **changes: object) -> SnapshotInfo:
    base = SnapshotInfo(
        id=new_id(1_700_000_000 + n),
        cluster=cluster,
        group=group,
        partition=n % 50,
        trigger="manual",
        created_at=1_700_000_000.0 + n,
        path=f"/var/snapshots/{n}",
        first_offset=n,
        last_offset=n + 10,
        record_count=11,
        bytes=1234,
        manifest_sha256="ab" * 32,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_snapshot_migration_is_version_3() -> None:
    assert (MIGRATIONS[2].version, MIGRATIONS[2].name) == (3, "__consumer_offsets snapshot index")


def test_add_snapshot_round_trips_every_field(store: Store) -> None:
    row = info(1, trigger="alert:17", truncated=True, first_offset=None, last_offset=None)
    store.add_snapshot(row)
    assert store.snapshot(row.id) == row


def test_snapshots_filter_by_cluster_and_group_oldest_first(store: Store) -> None:
    rows = [info(3, "c1", "g1"), info(1, "c1", "g2"), info(2, "c2", "g1"), info(0, "c1", "g1")]
    for row in rows:
        store.add_snapshot(row)
    assert [r.id for r in store.snapshots()] == sorted(r.id for r in rows)
    assert [r.id for r in store.snapshots("c1", "g1")] == [rows[3].id, rows[0].id]
    assert {r.id for r in store.snapshots(cluster="c1")} == {rows[0].id, rows[1].id, rows[3].id}
    assert {r.id for r in store.snapshots(group="g1")} == {rows[0].id, rows[2].id, rows[3].id}


def test_snapshot_unknown_id_none(store: Store) -> None:
    assert store.snapshot(new_id()) is None


def test_delete_snapshot_removes_row_only_once(store: Store) -> None:
    keep, drop = info(1), info(2)
    store.add_snapshot(keep)
    store.add_snapshot(drop)
    assert store.delete_snapshot(drop.id) is True
    assert store.delete_snapshot(drop.id) is False
    assert store.snapshots() == (keep,)


def test_add_snapshot_same_id_replaces(store: Store) -> None:
    row = info(1)
    store.add_snapshot(row)
    store.add_snapshot(dataclasses.replace(row, record_count=99))
    assert [r.record_count for r in store.snapshots()] == [99]


def test_add_snapshot_closed_store_raises(store: Store) -> None:
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.add_snapshot(info(1))
