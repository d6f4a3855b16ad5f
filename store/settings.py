"""Where the store keeps its file and how long history and resolved alerts are kept (the ``store`` settings).

A value type of :class:`service.settings.Settings`, which composes it; it lives beside the stores that
take it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, model_validator


class StoreSettings(BaseModel):
    path: Path = Path("var/offsetguard.db")
    # Full-resolution history is kept this long; older rows are thinned to one per bucket.
    full_resolution_hours: float = Field(default=24.0, gt=0)
    thinned_bucket_seconds: int = Field(default=300, ge=1)
    retention_days: float = Field(default=14.0, gt=0)
    # Resolved alerts (with their transitions) are deleted this long after they resolved. At least a day:
    # detection reads the alerts resolved within its quiet period (default 1 h) to recognise an occurrence
    # reported again.
    alerts_retention_days: float = Field(default=90.0, ge=1)

    @model_validator(mode="after")
    def _retention_covers_full_resolution(self) -> StoreSettings:
        if self.retention_days * 24 < self.full_resolution_hours:
            raise ValueError("retention_days must cover full_resolution_hours")
        return self

    @model_validator(mode="after")
    def _alerts_outlive_history(self) -> StoreSettings:
        # The console draws a group's history beside its alerts: both must reach as far back.
        if self.alerts_retention_days < self.retention_days:
            raise ValueError("alerts_retention_days must cover retention_days (the history kept)")
        return self
