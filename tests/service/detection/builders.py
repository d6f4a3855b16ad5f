"""Literal findings, alerts and tail events for the detection tests (cluster ``c``, topic ``t``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from alerts.current import range_history
from alerts.model import LAG_HIGH, OFFSET_REWIND, Finding
from alerts.state import DetectionState
from collectors.codec.records import OffsetCommit
from collectors.tail_model import TailEvent

C = "c"
T = "t"


def rewind(
    old: int = 500, new: int = 300, at: float = 2.0, cause: str = "unknown", partition: int = 0, **kw: Any
) -> Finding:
    return Finding(
        kind=OFFSET_REWIND,
        severity=kw.pop("severity", "critical"),
        cluster=C,
        group="g",
        topic=T,
        partition=partition,
        summary=f"rewound {old}->{new}",
        cause=cause,
        magnitude={"messages_replayed": old - new},
        evidence={"old_offset": old, "new_offset": new, "new_committed_at": at, **kw},
    )


def lag(value: int = 20_000, group: str = "g", severity: str = "warning") -> Finding:
    return Finding(
        kind=LAG_HIGH,
        severity=severity,  # type: ignore[arg-type]
        cluster=C,
        group=group,
        topic=T,
        partition=0,
        summary=f"lag {value}",
        magnitude={"lag": value, "lag_seconds": None},
        evidence={"committed": 0, "log_end": value},
    )


def commit_event(
    offset: int, source_offset: int, at_ms: int, group: str = "g", partition: int = 0
) -> TailEvent:
    record = OffsetCommit(1, group, T, partition, 3, offset, None, "", at_ms, None, None)
    return TailEvent(C, 7, source_offset, at_ms, record)


def carried(state: DetectionState) -> DetectionState:
    """``state`` with each range history carried to its partition's last observation: what a release
    before format 5 saved (and what reading its body gives), read as ``state`` is."""
    return replace(state, ranges={k: range_history(state, k) for k in state.ranges})


def before_format_5(body: dict[str, Any]) -> dict[str, Any]:
    """A whole body (``state_codec.dumps``) as a release before format 5 wrote it: each partition's row
    with its own observation time (first of its fields), no ``partitions_seen``."""
    seen = body.pop("partitions_seen")
    other = {(t, p): at for t, p, at in seen["other"]}
    body["partition_fields"] = ["observed_at", *body["partition_fields"]]
    body["partitions"] = [[t, p, other.get((t, p), seen["at"]), *v] for t, p, *v in body["partitions"]]
    return body
