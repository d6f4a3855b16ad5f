"""What a drill is expected to cause and what it saw (plain data, no I/O)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

Magnitude = Mapping[str, int | float | None]


@dataclass(frozen=True)
class Caused:
    """What a drill's action did: when (``time.monotonic()``), and the magnitude the alert must carry
    (the fields named; others may be present)."""

    at: float
    magnitude: Magnitude
    # a drill that expects no alert: how long the service took to see what the action changed
    seen_in: float | None = None


@dataclass(frozen=True)
class DrillResult:
    """One drill's outcome, as the table and ``--json`` show it."""

    drill: str
    expected: str  # "<alert kind>/<severities>"
    topic: str
    group: str
    passed: bool
    detail: str  # why it failed, or what it noticed
    alert_id: str | None = None
    seen_kind: str | None = None
    seen_severity: str | None = None
    seen_cause: str | None = None
    magnitude: Magnitude = field(default_factory=dict)
    detection_latency_s: float | None = None  # action done -> alert visible in the API
    notification: str = "none queued"  # delivered, none queued, or why not delivered
    notification_latency_s: float | None = None  # action done -> every receiver delivered
    acknowledged: str = "no alert"  # yes, or why the ack was refused (a write token is needed)
    cleanup: str = "done"

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["magnitude"] = dict(self.magnitude)
        out["result"] = "PASS" if self.passed else "FAIL"
        return out
