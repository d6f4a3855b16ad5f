"""``__consumer_offsets`` snapshots: the index, one manifest, and the result of taking one."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from collectors.snapshots import SnapshotInfo, SnapshotResult


class SnapshotOut(BaseModel):
    id: str
    cluster: str
    group: str
    partition: int  # of __consumer_offsets
    trigger: str  # "manual" or the id of the alert that asked for it
    created_at: float
    first_offset: int | None
    last_offset: int | None
    record_count: int
    bytes: int
    truncated: bool
    manifest_sha256: str
    download_url: str

    @classmethod
    def of(cls, info: SnapshotInfo) -> SnapshotOut:
        return cls(
            id=info.id,
            cluster=info.cluster,
            group=info.group,
            partition=info.partition,
            trigger=info.trigger,
            created_at=info.created_at,
            first_offset=info.first_offset,
            last_offset=info.last_offset,
            record_count=info.record_count,
            bytes=info.bytes,
            truncated=info.truncated,
            manifest_sha256=info.manifest_sha256,
            download_url=f"/api/v1/snapshots/{info.id}/download",
        )


class SnapshotList(BaseModel):
    """Newest first."""

    snapshots: list[SnapshotOut]


class SnapshotManifest(BaseModel):
    id: str
    manifest: dict[str, Any]  # manifest.json as written with the snapshot


class SnapshotTaken(BaseModel):
    snapshot: SnapshotOut
    counts: dict[str, int]
    log_start: int
    end_offset: int
    deleted: list[str]  # older snapshots removed by retention

    @classmethod
    def of(cls, result: SnapshotResult) -> SnapshotTaken:
        return cls(
            snapshot=SnapshotOut.of(result.info),
            counts=result.counts.as_dict(),
            log_start=result.log_start,
            end_offset=result.end_offset,
            deleted=list(result.deleted),
        )
