"""Streaming a snapshot's files: a ``.tar.gz`` of the whole snapshot, or its ``records.jsonl.gz`` as is.

Only the three known file names of a snapshot directory found by :func:`collectors.snapshots.resolve`
(which refuses anything but a well-formed id, and a directory that resolves outside the snapshot
directory) are ever opened, each with ``O_NOFOLLOW`` and checked to be a regular file: nothing outside
the snapshot directory can be read. Files are opened before the response starts (so a missing one is a
404, not a broken stream) and read in chunks, so memory stays bounded whatever the snapshot's size.
"""

from __future__ import annotations

import os
import stat
import tarfile
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import BinaryIO, Literal

from collectors.snapshots import MANIFEST_FILE, RECORDS_FILE, STATE_FILE, resolve
from service.api.errors import NotFound

CHUNK = 256 * 1024
DownloadFormat = Literal["tar", "records"]


@dataclass(frozen=True, slots=True)
class Member:
    name: str
    file: BinaryIO
    size: int
    mtime: float


def _open(directory: Path, name: str, snapshot_id: str) -> Member:
    try:
        fd = os.open(directory / name, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise NotFound(f"snapshot {snapshot_id} has no readable {name}", code="snapshot_not_found") from exc
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotFound(f"snapshot {snapshot_id}: {name} is not a regular file", code="snapshot_not_found")
    return Member(name, os.fdopen(fd, "rb"), st.st_size, st.st_mtime)


def open_members(snapshots_dir: Path, snapshot_id: str, fmt: DownloadFormat) -> list[Member]:
    """The files to send, opened; 404 (:class:`NotFound`) for an unknown or malformed id."""
    directory = resolve(snapshots_dir, snapshot_id)
    if not directory.is_dir():
        raise NotFound(f"no snapshot {snapshot_id}", code="snapshot_not_found")
    names = (RECORDS_FILE,) if fmt == "records" else (MANIFEST_FILE, STATE_FILE, RECORDS_FILE)
    members: list[Member] = []
    try:
        for name in names:
            members.append(_open(directory, name, snapshot_id))
    except BaseException:
        close(members)
        raise
    return members


def close(members: Sequence[Member]) -> None:
    for m in members:
        m.file.close()


def _chunks(member: Member) -> Iterator[bytes]:
    remaining = member.size  # the size when opened: snapshot files are final, never appended to
    while remaining:
        chunk = member.file.read(min(CHUNK, remaining))
        if not chunk:
            raise OSError(f"{member.name} shrank while being sent")
        remaining -= len(chunk)
        yield chunk


def raw_stream(member: Member) -> Iterator[bytes]:
    """One file's bytes, chunk by chunk; closes it at the end (or when the client goes away)."""
    try:
        yield from _chunks(member)
    finally:
        member.file.close()


def tar_gz_stream(prefix: str, members: Sequence[Member]) -> Iterator[bytes]:
    """A gzipped POSIX tar of ``members`` under ``prefix/``, built block by block as it is sent."""
    gz = zlib.compressobj(6, zlib.DEFLATED, 31)  # wbits 31: gzip framing
    try:
        for m in members:
            info = tarfile.TarInfo(f"{prefix}/{m.name}")
            info.size, info.mtime, info.mode = m.size, int(m.mtime), 0o644
            padding = b"\0" * (-m.size % tarfile.BLOCKSIZE)
            for data in chain((info.tobuf(tarfile.PAX_FORMAT),), _chunks(m), (padding,)):
                out = gz.compress(data)
                if out:
                    yield out
        yield gz.compress(b"\0" * (2 * tarfile.BLOCKSIZE)) + gz.flush()
    finally:
        close(members)
