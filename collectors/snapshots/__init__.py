"""Snapshots of one group's ``__consumer_offsets`` partition: raw records, folded state and a manifest.

:func:`take_snapshot` writes one (see :mod:`collectors.snapshots.writer` for the layout); the ``reading``
functions open one by id, and :func:`prune` applies the retention count. Kafka is read through a
:class:`collectors.raw_reader.RawRecordReader`.
"""

from collectors.snapshots.ids import is_valid, new_id, resolve, validate
from collectors.snapshots.model import (
    MANIFEST_FILE,
    RECORDS_FILE,
    STATE_FILE,
    InvalidSnapshotIdError,
    Progress,
    SnapshotCounts,
    SnapshotError,
    SnapshotIndex,
    SnapshotInfo,
    SnapshotResult,
)
from collectors.snapshots.reading import iter_records, read_manifest, read_state, snapshot_path, verify
from collectors.snapshots.retention import delete, prune, snapshot_ids
from collectors.snapshots.writer import take_snapshot

__all__ = [
    "MANIFEST_FILE",
    "RECORDS_FILE",
    "STATE_FILE",
    "InvalidSnapshotIdError",
    "Progress",
    "SnapshotCounts",
    "SnapshotError",
    "SnapshotIndex",
    "SnapshotInfo",
    "SnapshotResult",
    "delete",
    "is_valid",
    "iter_records",
    "new_id",
    "prune",
    "read_manifest",
    "read_state",
    "resolve",
    "snapshot_ids",
    "snapshot_path",
    "take_snapshot",
    "validate",
    "verify",
]
