"""Alerts the store has not taken yet (it refuses writes: :mod:`service.detection.backlog`), shown by the
alerts API beside the stored ones: the first page of a list carries them (newest first, as they are newer
than anything stored) in place of their stored versions, and one alert is found in memory too."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from store.alert_records import Alert, Transition

Unstored = Sequence[tuple[Alert, Sequence[Transition]]]


def unstored(runtime: Any) -> Unstored:
    """Every detection loop's kept alerts with their kept transitions (none when nothing is kept)."""
    return [pair for loop in getattr(runtime, "detections", ()) for pair in loop.backlog.unstored()]


def matches(a: Alert, wanted: dict[str, Any]) -> bool:
    """``a`` passes the list filters (None: any; ``since``: updated at or after)."""
    since = wanted.get("since")
    if since is not None and a.updated_at < since:
        return False
    fields: dict[str, str | None] = {
        "status": a.status,
        "kind": a.kind,
        "severity": a.severity,
        "cluster": a.cluster,
    }
    fields |= {"group": a.group, "topic": a.topic}
    return all(wanted.get(k) is None or wanted[k] == v for k, v in fields.items())


def first_page(stored: Sequence[Alert], kept: Unstored, wanted: dict[str, Any], limit: int) -> list[Alert]:
    """The first page: the kept alerts that match, newest first, then the stored ones not among them."""
    memory = sorted((a for a, _ in kept if matches(a, wanted)), key=lambda a: a.updated_at, reverse=True)
    ids = {a.id for a, _ in kept}
    return [*memory, *(a for a in stored if a.id not in ids)][: max(limit, len(memory))]
