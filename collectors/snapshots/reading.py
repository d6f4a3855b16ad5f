"""Reading a finished snapshot by id: its manifest, its records and a check of its files' hashes.

Every function resolves the id through :func:`collectors.snapshots.ids.resolve`, so a malformed id is
refused before any path is built from it.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from collectors.snapshots.files import sha256_of
from collectors.snapshots.ids import resolve
from collectors.snapshots.model import MANIFEST_FILE, RECORDS_FILE, STATE_FILE, SnapshotError


def snapshot_path(directory: Path, snapshot_id: str) -> Path:
    """The directory of an existing snapshot (SnapshotError if there is none by that id)."""
    path = resolve(directory, snapshot_id)
    if not (path / MANIFEST_FILE).is_file():
        raise SnapshotError(f"no snapshot {snapshot_id} in {directory}", snapshot_id=snapshot_id)
    return path


def _load(path: Path, snapshot_id: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as exc:
        raise SnapshotError(f"cannot read {path.name}: {exc}", snapshot_id=snapshot_id) from exc


def read_manifest(directory: Path, snapshot_id: str) -> dict[str, Any]:
    """The snapshot's ``manifest.json``."""
    manifest: dict[str, Any] = _load(snapshot_path(directory, snapshot_id) / MANIFEST_FILE, snapshot_id)
    return manifest


def read_state(directory: Path, snapshot_id: str) -> dict[str, Any]:
    """The snapshot's ``state.json`` (folded offsets of every group in the partition)."""
    state: dict[str, Any] = _load(snapshot_path(directory, snapshot_id) / STATE_FILE, snapshot_id)
    return state


def iter_records(directory: Path, snapshot_id: str) -> Iterator[dict[str, Any]]:
    """The lines of ``records.jsonl.gz``, in offset order."""
    path = snapshot_path(directory, snapshot_id) / RECORDS_FILE
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for text in f:
                yield json.loads(text)
    except (OSError, ValueError, EOFError) as exc:
        raise SnapshotError(f"cannot read {RECORDS_FILE}: {exc}", snapshot_id=snapshot_id) from exc


def verify(directory: Path, snapshot_id: str) -> list[str]:
    """Files whose size or SHA-256 differs from the manifest (empty: the snapshot is intact)."""
    path = snapshot_path(directory, snapshot_id)
    listed = read_manifest(directory, snapshot_id).get("files") or {}
    bad = []
    # Only the known file names: a tampered manifest must not make us hash paths of its choosing.
    for name in (RECORDS_FILE, STATE_FILE):
        facts, file = listed.get(name), path / name
        if (
            not isinstance(facts, dict)
            or not file.is_file()
            or file.stat().st_size != facts.get("bytes")
            or sha256_of(file) != facts.get("sha256")
        ):
            bad.append(name)
    return bad
