"""One JSON line per raw record: where it is, its bytes in base64, its batch facts and what it decodes to.

The decoded record is written as ``{"type": <class name>, "fields": {...}}`` with bytes in base64,
tuples as lists and nested records as objects. A record that fails to decode keeps ``"decoded": null``
and says why in ``"error"``; control records (transaction markers) carry ``"marker"`` instead.
"""

from __future__ import annotations

import base64
import dataclasses
from typing import Any

from collectors.codec import Record
from collectors.raw_reader import RawRecord


def b64(data: bytes | None) -> str | None:
    """Standard base64 of ``data``; None stays None (a tombstone's value)."""
    return None if data is None else base64.b64encode(data).decode("ascii")


def jsonable(value: Any) -> Any:
    """``value`` with dataclasses as dicts, bytes as base64, tuples as lists (recursively)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return b64(bytes(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return value


def decoded(record: Record) -> dict[str, Any]:
    """``{"type": ..., "fields": ...}`` for a decoded record."""
    return {"type": type(record).__name__, "fields": jsonable(record)}


def line(raw: RawRecord, record: Record | None, error: str | None) -> dict[str, Any]:
    """The JSON object written for ``raw``; ``record`` is None for markers and undecodable records."""
    out: dict[str, Any] = {
        "partition": raw.partition,
        "offset": raw.offset,
        "timestamp": raw.timestamp,
        "key": b64(raw.key),
        "value": b64(raw.value),
        "producer_id": raw.producer_id,
        "producer_epoch": raw.producer_epoch,
        "transactional": raw.transactional,
        "control": raw.control,
    }
    if raw.control:
        out["marker"] = raw.marker
    out["decoded"] = None if record is None else decoded(record)
    out["error"] = error
    return out
