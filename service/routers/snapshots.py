"""``/api/v1/snapshots``: the snapshot index, one manifest, streamed downloads; and taking one now
(``POST /api/v1/clusters/{cluster}/groups/{group}/snapshots``, write scope, in a worker thread)."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from collectors.model import GroupsObservation
from collectors.snapshots import MANIFEST_FILE, is_valid, read_manifest, resolve
from service.api import archive
from service.api.deps import (
    ConfiguredCluster,
    GroupName,
    ReadAccess,
    RuntimeDep,
    SettingsDep,
    SnapshotTakerDep,
    StoreDep,
    WriteAccess,
)
from service.api.errors import READ_ERRORS, WRITE_ERRORS, Conflict, ErrorBody, NotFound, as_json
from service.api.groups import committed_or_404, find_group
from service.api.paths import unescape
from service.api.schemas.snapshots import SnapshotList, SnapshotManifest, SnapshotOut, SnapshotTaken
from service.settings import Settings

router = APIRouter(tags=["snapshots"])

DOWNLOAD_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "content": {"application/gzip": {"schema": {"type": "string", "format": "binary"}}},
        "description": "format=tar: the snapshot directory as .tar.gz; format=records: records.jsonl.gz",
    }
}


def _existing(settings: Settings, snapshot_id: str) -> str:
    """``snapshot_id`` if a finished snapshot by that id is in the snapshot directory, else 404."""
    snapshot_id = unescape(snapshot_id)
    if not is_valid(snapshot_id):
        raise NotFound(f"not a snapshot id: {snapshot_id!r}", code="snapshot_not_found")
    if not (resolve(settings.snapshots.directory, snapshot_id) / MANIFEST_FILE).is_file():
        raise NotFound(f"no snapshot {snapshot_id}", code="snapshot_not_found")
    return snapshot_id


@router.get("/api/v1/snapshots", response_model=SnapshotList, responses=READ_ERRORS)
def list_snapshots(
    _: ReadAccess,
    store: StoreDep,
    cluster: Annotated[str | None, Query(max_length=200)] = None,
    group: Annotated[str | None, Query(max_length=1000)] = None,
) -> SnapshotList:
    """Indexed snapshots, newest first, of one cluster and/or group."""
    return SnapshotList(snapshots=[SnapshotOut.of(s) for s in reversed(store.snapshots(cluster, group))])


@router.get("/api/v1/snapshots/{snapshot_id}", response_model=SnapshotManifest, responses=READ_ERRORS)
def get_snapshot(_: ReadAccess, settings: SettingsDep, snapshot_id: str) -> SnapshotManifest:
    """The snapshot's manifest.json: what was read, counts, file sizes and SHA-256s."""
    found = _existing(settings, snapshot_id)
    return SnapshotManifest(id=found, manifest=read_manifest(settings.snapshots.directory, found))


@router.get(
    "/api/v1/snapshots/{snapshot_id}/download",
    response_class=StreamingResponse,
    responses={**as_json(READ_ERRORS), **DOWNLOAD_RESPONSE},
)
def download_snapshot(
    _: ReadAccess,
    settings: SettingsDep,
    snapshot_id: str,
    format: Annotated[
        archive.DownloadFormat, Query(description="tar (.tar.gz of all files) or records")
    ] = "tar",
) -> StreamingResponse:
    """The snapshot's files, streamed; only files inside the snapshot directory are ever read."""
    found = _existing(settings, snapshot_id)
    members = archive.open_members(settings.snapshots.directory, found, format)
    if format == "records":
        body, name = archive.raw_stream(members[0]), f"{found}-records.jsonl.gz"
    else:
        body, name = archive.tar_gz_stream(found, members), f"{found}.tar.gz"
    headers = {"Content-Disposition": f"attachment; filename={quote(name)}"}
    return StreamingResponse(body, media_type="application/gzip", headers=headers)


@router.post(
    "/api/v1/clusters/{cluster}/groups/{group}/snapshots",
    response_model=SnapshotTaken,
    status_code=201,
    responses={**WRITE_ERRORS, 409: {"model": ErrorBody, "description": "A snapshot of it is being taken"}},
)
async def take_snapshot(
    _: WriteAccess,
    request: Request,
    cluster: ConfiguredCluster,
    group: GroupName,
    runtime: RuntimeDep,
    settings: SettingsDep,
    store: StoreDep,
    take: SnapshotTakerDep,
) -> SnapshotTaken:
    """Snapshot the group's ``__consumer_offsets`` partition now (blocks until written)."""
    info = find_group(runtime.latest.get(cluster.name, GroupsObservation), group)
    await asyncio.to_thread(committed_or_404, store, cluster.name, group, info)
    running: set[tuple[str, str]] | None = getattr(request.app.state, "snapshots_running", None)
    if running is None:
        running = request.app.state.snapshots_running = set()
    key = (cluster.name, group)
    if key in running:
        raise Conflict(f"a snapshot of group {group!r} is already being taken", code="snapshot_running")
    running.add(key)
    try:
        result = await asyncio.to_thread(take, cluster, group, settings, store)
    finally:
        running.discard(key)
    return SnapshotTaken.of(result)
