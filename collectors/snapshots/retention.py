"""Listing snapshot directories and deleting the oldest beyond the retention count.

A snapshot is deleted by first renaming it out of the id namespace (``.deleting-<id>``) and then removing
the files, so a reader either sees the whole snapshot or none of it. Partial directories left behind by a
crashed writer are removed once they are older than :data:`STALE_PARTIAL_SECONDS`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time
from pathlib import Path

from collectors.snapshots.ids import PARTIAL_PREFIX, is_valid, resolve
from collectors.snapshots.model import SnapshotError, SnapshotIndex

log = logging.getLogger(__name__)

DELETING_PREFIX = ".deleting-"
STALE_PARTIAL_SECONDS = 24 * 3600  # no snapshot takes a day to write: older partials are crash leftovers


def snapshot_ids(directory: Path) -> list[str]:
    """Ids of the complete snapshots in ``directory``, oldest first (partial ones are never listed)."""
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise SnapshotError(f"cannot list snapshots in {directory}: {exc.strerror or exc}") from exc
    return sorted(e.name for e in entries if is_valid(e.name) and e.is_dir(follow_symlinks=False))


def delete(directory: Path, snapshot_id: str) -> bool:
    """Remove snapshot ``snapshot_id`` from ``directory``; False if it was not there."""
    path = resolve(directory, snapshot_id)
    doomed = path.with_name(f"{DELETING_PREFIX}{snapshot_id}")
    try:
        os.rename(path, doomed)  # atomic: from here on, no reader can open it by id
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise SnapshotError(
            f"cannot delete snapshot: {exc.strerror or exc}", snapshot_id=snapshot_id
        ) from exc
    shutil.rmtree(doomed, ignore_errors=True)
    return True


def prune(directory: Path, keep: int, index: SnapshotIndex | None = None) -> tuple[str, ...]:
    """Delete the oldest snapshots so that at most ``keep`` remain; their index rows go too.

    Returns the ids deleted. Another process pruning at the same time is harmless: a snapshot already
    gone is skipped.
    """
    ids = snapshot_ids(directory)
    excess = ids[: max(len(ids) - keep, 0)]
    deleted = []
    for snapshot_id in excess:
        if delete(directory, snapshot_id):
            deleted.append(snapshot_id)
        if index is not None:
            index.delete_snapshot(snapshot_id)
    _remove_stale_leftovers(directory)
    return tuple(deleted)


def _remove_stale_leftovers(directory: Path, now: float | None = None) -> None:
    horizon = (time.time() if now is None else now) - STALE_PARTIAL_SECONDS
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            if not entry.name.startswith((PARTIAL_PREFIX, DELETING_PREFIX)):
                continue
            with contextlib.suppress(OSError):
                if entry.name.startswith(DELETING_PREFIX) or entry.stat().st_mtime < horizon:
                    log.info("removing leftover snapshot directory %s", entry.path)
                    shutil.rmtree(entry.path, ignore_errors=True)
