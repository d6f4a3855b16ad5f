"""File plumbing of snapshots: a size-capped gzip writer, hashes, JSON files and durable renames."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import zlib
from pathlib import Path
from typing import Any, BinaryIO

# Room kept under the cap for what closing a gzip stream still writes (last deflate block + trailer).
GZIP_CLOSE_RESERVE = 64


class CappedGzipWriter:
    """Gzip lines into ``path`` while the compressed file stays within ``max_bytes``.

    The compressor buffers input, so the file's size lags what was written. Before a line that could
    cross the cap (counting everything not yet flushed as if it were incompressible), the stream is
    flushed and measured; only a line that still does not fit is refused. Flushes therefore happen only
    near the cap, and the finished file is never larger than ``max_bytes``.
    """

    def __init__(self, path: Path, max_bytes: int) -> None:
        self._raw: BinaryIO = open(path, "wb")  # noqa: SIM115 - closed in close()
        # filename="" and mtime=0: the header names no temporary path and the bytes are reproducible.
        self._gz = gzip.GzipFile(filename="", fileobj=self._raw, mode="wb", compresslevel=6, mtime=0)
        self._budget = max_bytes - GZIP_CLOSE_RESERVE
        self._pending = 0  # bytes handed to the compressor since the last flush
        self.lines = 0

    def write(self, data: bytes) -> bool:
        """Append ``data`` (one line) unless the cap would be crossed; False means full (nothing written)."""
        if self._raw.tell() + self._pending + len(data) > self._budget:
            self._gz.flush(zlib.Z_SYNC_FLUSH)
            self._pending = 0
            if self._raw.tell() + len(data) > self._budget:
                return False
        self._gz.write(data)
        self._pending += len(data)
        self.lines += 1
        return True

    def close(self) -> None:
        """Finish the gzip stream and make it durable."""
        try:
            self._gz.close()
            self._raw.flush()
            os.fsync(self._raw.fileno())
        finally:
            self._raw.close()

    def abort(self) -> None:
        """Close without caring about the content (the snapshot is being thrown away)."""
        with contextlib.suppress(Exception):
            self._gz.close()
        self._raw.close()


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1024 * 1024), b""):
            digest.update(chunk)
    return digest.hexdigest()


def write_json(path: Path, content: Any) -> None:
    """Write ``content`` as pretty JSON and fsync it."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(content, f, indent=2, sort_keys=True)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())


def fsync_dir(path: Path) -> None:
    """Make a rename or unlink inside directory ``path`` durable (no-op where directories cannot sync)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
