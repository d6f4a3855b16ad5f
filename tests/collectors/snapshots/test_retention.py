"""Retention: the newest ``keep`` snapshots stay, older ones go with their index rows."""

from __future__ import annotations

import os
import time
from pathlib import Path

from collectors.snapshots import new_id, prune, snapshot_ids, take_snapshot
from collectors.snapshots.retention import STALE_PARTIAL_SECONDS, delete
from tests.collectors.snapshots.fakes import FakeReader, ListIndex, commit


def make_dirs(directory: Path, count: int) -> list[str]:
    made = [new_id(1_700_000_000 + i) for i in range(count)]
    for snapshot_id in made:
        (directory / snapshot_id).mkdir(parents=True)
        (directory / snapshot_id / "manifest.json").write_text("{}")
    return made


def test_prune_beyond_keep_deletes_oldest_and_index_rows(tmp_path: Path) -> None:
    made = make_dirs(tmp_path, 5)
    index = ListIndex()
    index.rows = dict.fromkeys(made)  # type: ignore[arg-type]
    deleted = prune(tmp_path, 2, index)
    assert deleted == tuple(made[:3])
    assert snapshot_ids(tmp_path) == made[3:]
    assert sorted(index.rows) == made[3:]


def test_prune_within_keep_deletes_nothing(tmp_path: Path) -> None:
    made = make_dirs(tmp_path, 3)
    assert prune(tmp_path, 3) == ()
    assert snapshot_ids(tmp_path) == made


def test_prune_ignores_partial_and_foreign_entries(tmp_path: Path) -> None:
    made = make_dirs(tmp_path, 2)
    (tmp_path / f".partial-{new_id()}").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / new_id()).write_text("a file, not a snapshot")
    assert snapshot_ids(tmp_path) == made
    assert prune(tmp_path, 1) == (made[0],)
    assert (tmp_path / "notes").is_dir()
    assert len([p for p in tmp_path.iterdir() if p.name.startswith(".partial-")]) == 1


def test_prune_stale_partial_removed_fresh_kept(tmp_path: Path) -> None:
    stale, fresh = tmp_path / f".partial-{new_id()}", tmp_path / f".partial-{new_id()}"
    stale.mkdir()
    fresh.mkdir()
    old = time.time() - STALE_PARTIAL_SECONDS - 60
    os.utime(stale, (old, old))
    prune(tmp_path, 5)
    assert not stale.exists() and fresh.exists()


def test_delete_missing_snapshot_returns_false(tmp_path: Path) -> None:
    assert delete(tmp_path, new_id()) is False


def test_take_snapshot_keep_applies_retention_to_files_and_index(tmp_path: Path) -> None:
    index = ListIndex()
    results = []
    for i in range(4):
        reader = FakeReader([commit(0, "g1", "t", 0, i)])
        results.append(
            take_snapshot(
                reader, cluster="c1", group="g1", directory=tmp_path, max_bytes=10**6, keep=2, index=index,
                clock=lambda i=i: 1_700_000_000.0 + i,
            )
        )  # fmt: skip
    ids = [r.info.id for r in results]
    assert snapshot_ids(tmp_path) == ids[2:]
    assert sorted(index.rows) == ids[2:]
    assert results[2].deleted == (ids[0],) and results[3].deleted == (ids[1],)
