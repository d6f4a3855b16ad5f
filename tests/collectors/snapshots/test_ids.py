"""Snapshot ids: sortable, unique, and never a way out of the snapshot directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from collectors.snapshots import (
    InvalidSnapshotIdError,
    is_valid,
    iter_records,
    new_id,
    read_manifest,
    resolve,
    snapshot_path,
    validate,
)
from collectors.snapshots.model import SnapshotError

VALID = "20261105T101502123Z-3f9a1c2e"


def test_new_id_later_time_sorts_after() -> None:
    times = [1_700_000_000.0, 1_700_000_000.001, 1_700_000_001.5, 1_800_000_000.0]
    made = [new_id(t) for t in times]
    assert made == sorted(made)
    assert all(is_valid(i) for i in made)


def test_new_id_encodes_utc_milliseconds() -> None:
    assert new_id(1_767_225_600.25).startswith("20260101T000000250Z-")


def test_new_id_same_instant_unique() -> None:
    assert len({new_id(1_700_000_000.0) for _ in range(200)}) == 200


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "..",
        "../" + VALID,
        VALID + "/..",
        "/etc/passwd",
        VALID + "\n",
        VALID.upper(),
        ".partial-" + VALID,
        VALID[:-1],
        VALID.replace("T", "/"),
    ],
)
def test_validate_malformed_id_refused(bad: str, tmp_path: Path) -> None:
    assert not is_valid(bad)
    with pytest.raises(InvalidSnapshotIdError):
        validate(bad)
    with pytest.raises(InvalidSnapshotIdError):
        resolve(tmp_path, bad)


def test_resolve_valid_id_stays_inside_directory(tmp_path: Path) -> None:
    assert resolve(tmp_path, VALID) == tmp_path.resolve() / VALID


def test_resolve_symlink_leading_outside_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    base = tmp_path / "snapshots"
    base.mkdir()
    os.symlink(outside, base / VALID)
    with pytest.raises(InvalidSnapshotIdError, match="outside"):
        resolve(base, VALID)


def test_read_manifest_traversal_id_refused_before_touching_files(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("{}")
    with pytest.raises(InvalidSnapshotIdError):
        read_manifest(tmp_path / "sub", "..")
    with pytest.raises(InvalidSnapshotIdError):
        list(iter_records(tmp_path, "../" + VALID))


def test_snapshot_path_unknown_id_raises(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="no snapshot"):
        snapshot_path(tmp_path, VALID)
