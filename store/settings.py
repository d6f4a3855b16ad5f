"""Where the store keeps its file and how long history is kept (the ``store`` settings).

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

    @model_validator(mode="after")
    def _retention_covers_full_resolution(self) -> StoreSettings:
        if self.retention_days * 24 < self.full_resolution_hours:
            raise ValueError("retention_days must cover full_resolution_hours")
        return self
