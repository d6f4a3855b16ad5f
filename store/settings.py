"""Where the store keeps its data and how long history and resolved alerts are kept (the ``store`` settings).

``url`` unset: the embedded SQLite file at ``path`` (the default). ``url: postgresql://user@host:port/db``:
a PostgreSQL database, which replicas can share; its password in the URL, or in ``password`` /
``password_file`` (a mounted Secret) / ``password_env``.

A value type of :class:`service.settings.Settings`, which composes it; it lives beside the stores that
take it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator

from collectors.settings import secret_source

POSTGRES_SCHEMES = ("postgresql", "postgres")


class StoreSettings(BaseModel):
    path: Path = Path("var/offsetguard.db")
    # postgresql://user[:password]@host[:port]/database: the store on PostgreSQL (path is then unused)
    url: str | None = Field(default=None, repr=False)
    password: SecretStr | None = None  # or password_file / password_env; with url only
    # Full-resolution history is kept this long; older rows are thinned to one per bucket.
    full_resolution_hours: float = Field(default=24.0, gt=0)
    thinned_bucket_seconds: int = Field(default=300, ge=1)
    retention_days: float = Field(default=14.0, gt=0)
    # Resolved alerts (with their transitions) are deleted this long after they resolved. At least a day:
    # detection reads the alerts resolved within its quiet period (default 1 h) to recognise an occurrence
    # reported again.
    alerts_retention_days: float = Field(default=90.0, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _password_source(cls, data: Any) -> Any:
        if isinstance(data, dict) and any(
            data.get(k) not in (None, "") for k in ("password", "password_file", "password_env")
        ):
            return secret_source(data, "password")
        if isinstance(data, dict):  # empty ones (an unset env mapping) are no source
            return {k: v for k, v in data.items() if k not in ("password_file", "password_env")}
        return data

    @field_validator("url")
    @classmethod
    def _postgresql_url(cls, url: str | None) -> str | None:
        if url is None or url == "":
            return None
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018  (raises on a port that is not a number)
        except ValueError as exc:
            raise ValueError(f"not a URL ({exc})") from None
        if parts.scheme not in POSTGRES_SCHEMES:
            raise ValueError(
                f"must be a postgresql://user@host:port/database URL (scheme {parts.scheme or 'missing'}); "
                "leave it unset for the SQLite file at store.path"
            )
        if not parts.hostname:
            raise ValueError("must name the PostgreSQL host: postgresql://user@host:port/database")
        if parts.path in ("", "/"):
            raise ValueError("must name the database: postgresql://user@host:port/database")
        return url

    @model_validator(mode="after")
    def _password_needs_url(self) -> StoreSettings:
        if self.password is not None and self.url is None:
            raise ValueError("password is for the PostgreSQL store: set url too")
        if self.password is not None and self.url is not None and urlsplit(self.url).password:
            raise ValueError("give the password in url or in password/password_file/password_env, not both")
        return self

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
