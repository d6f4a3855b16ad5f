"""What a snapshot is made of: its errors, its counts, its index entry and the index it is written to.

Errors (under :class:`collectors.errors.OffsetguardError`)::

    SnapshotError                a snapshot could not be written or read (.snapshot_id)
    └── InvalidSnapshotIdError   a string that is not a snapshot id was used as one
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Protocol

from collectors.errors import OffsetguardError

FORMAT_VERSION = 1
RECORDS_FILE = "records.jsonl.gz"
STATE_FILE = "state.json"
MANIFEST_FILE = "manifest.json"


class SnapshotError(OffsetguardError):
    """A snapshot could not be written or read; ``snapshot_id`` names it where known."""

    def __init__(self, message: str, *, snapshot_id: str | None = None, **where: Any) -> None:
        super().__init__(message, **where)
        self.snapshot_id = snapshot_id


class InvalidSnapshotIdError(SnapshotError):
    """A string that does not have the shape of a snapshot id was used as one."""


@dataclass(slots=True)
class SnapshotCounts:
    """Records of a snapshot by kind; ``total`` counts every record written, markers included."""

    total: int = 0
    commits: int = 0  # OffsetCommit (types 0 and 1)
    tombstones: int = 0  # offset tombstones + group tombstones
    offset_tombstones: int = 0
    group_records: int = 0  # group state records (types 2-24), tombstones excluded
    group_tombstones: int = 0
    unknown: int = 0  # UnknownRecord: a type or version the codec does not know
    decode_errors: int = 0  # corrupt bytes (DecodeError): kept raw with the error
    control: int = 0  # transaction markers (COMMIT / ABORT)
    transactional: int = 0  # data records written inside a transaction
    aborted: int = 0  # transactional records whose transaction was aborted
    out_of_scope: int = 0  # records of groups/topics out of the cluster's scope: not written, not in total

    def as_dict(self) -> dict[str, int]:
        """JSON-ready form."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, slots=True)
class SnapshotInfo:
    """One snapshot as the store indexes it; ``path`` is its (final) directory."""

    id: str
    cluster: str
    group: str
    partition: int
    trigger: str  # "manual" or the id of the alert that asked for it
    created_at: float  # seconds since the epoch
    path: str
    first_offset: int | None  # None: nothing was read (empty partition)
    last_offset: int | None
    record_count: int
    bytes: int  # all files together
    manifest_sha256: str
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class SnapshotResult:
    """What :func:`collectors.snapshots.take_snapshot` made, and what retention deleted to make room."""

    info: SnapshotInfo
    counts: SnapshotCounts
    log_start: int
    end_offset: int  # the high watermark captured when the snapshot started
    deleted: tuple[str, ...]  # ids of older snapshots removed by retention


class SnapshotIndex(Protocol):
    """Where snapshots are indexed (:class:`store.Store` fits); called from the writing thread."""

    def add_snapshot(self, info: SnapshotInfo) -> None: ...

    def delete_snapshot(self, snapshot_id: str) -> bool: ...


class Progress(Protocol):
    """Told how far a snapshot got: ``done`` of ``total`` offsets of the captured range are read."""

    def __call__(self, done: int, total: int) -> None: ...
