"""Snapshot ids: sortable by creation time, unique, and safe as a directory name.

An id looks like ``20261105T101502123Z-3f9a1c2e``: UTC time to the millisecond, then 32 random bits.
Sorting ids as strings sorts snapshots by creation time. :func:`resolve` is the only way from an id to a
path: it refuses anything that does not match the pattern, so an id can never name a path outside the
snapshot directory (no ``..``, no separators, no absolute paths).
"""

from __future__ import annotations

import re
import secrets
import time
from pathlib import Path

from collectors.snapshots.model import InvalidSnapshotIdError

ID_PATTERN = re.compile(r"^[0-9]{8}T[0-9]{9}Z-[0-9a-f]{8}$")
# A snapshot being written lives under this prefix; readers and retention never list it as a snapshot.
PARTIAL_PREFIX = ".partial-"


def new_id(now: float | None = None) -> str:
    """A fresh id for a snapshot created at ``now`` (seconds since the epoch; default: the clock)."""
    at = time.time() if now is None else now
    millis = round(at * 1000)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(millis // 1000))
    return f"{stamp}{millis % 1000:03d}Z-{secrets.token_hex(4)}"


def is_valid(snapshot_id: str) -> bool:
    """Whether ``snapshot_id`` has the shape :func:`new_id` produces."""
    return isinstance(snapshot_id, str) and ID_PATTERN.fullmatch(snapshot_id) is not None


def validate(snapshot_id: str) -> str:
    """``snapshot_id`` itself, or :class:`InvalidSnapshotIdError` if it is not a snapshot id."""
    if not is_valid(snapshot_id):
        raise InvalidSnapshotIdError(f"not a snapshot id: {snapshot_id!r}", snapshot_id=str(snapshot_id))
    return snapshot_id


def resolve(directory: Path, snapshot_id: str) -> Path:
    """The directory of snapshot ``snapshot_id`` under ``directory`` (it may not exist).

    Raises :class:`InvalidSnapshotIdError` for anything but a well-formed id, and (belt and braces) if the
    resolved path would leave ``directory``, e.g. through a symlink planted there.
    """
    validate(snapshot_id)
    base = directory.resolve()
    path = (base / snapshot_id).resolve()
    if path.parent != base:
        raise InvalidSnapshotIdError(
            f"snapshot {snapshot_id!r} resolves outside {base}", snapshot_id=snapshot_id
        )
    return path
