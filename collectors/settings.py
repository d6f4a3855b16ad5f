"""What the collectors are told: one Kafka cluster's connection (security included) and the snapshots.

Value types of the ``clusters`` and ``snapshots`` sections of :class:`service.settings.Settings`, which
composes them; they live here, beside the Kafka clients and the snapshot dump that take them, so nothing
below the service imports the service. Each refuses an unsafe or inconsistent value with a message that
names the field.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

SecurityProtocol = Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
SaslMechanism = Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]


def secret_source(data: Any, name: str) -> Any:
    """``<name>`` given directly, or read from ``<name>_file`` (a mounted Secret; one trailing newline
    dropped) or the environment variable ``<name>_env``: exactly one of the three."""
    if not isinstance(data, dict):
        return data
    given = [k for k in (name, f"{name}_file", f"{name}_env") if data.get(k) not in (None, "")]
    if len(given) != 1:
        raise ValueError(f"give exactly one of {name}, {name}_file, {name}_env")
    if given[0] == name:
        return data
    out = {k: v for k, v in data.items() if k not in (f"{name}_file", f"{name}_env")}
    out[name] = _read_secret(given[0], str(data[given[0]]))
    return out


def _read_secret(source: str, where: str) -> str:
    if source.endswith("_file"):
        try:
            text = Path(where).read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"{source}: cannot read {where}: {exc.strerror}") from None
        value = text[:-1] if text.endswith("\n") else text
        value = value[:-1] if value.endswith("\r") else value
        if not value:
            raise ValueError(f"{source}: {where} is empty")
    else:
        value = os.environ.get(where, "")
        if not value:
            raise ValueError(f"{source}: the environment variable {where} is unset or empty")
    return value


class SaslSettings(BaseModel):
    """``password`` may come from a file (``password_file``) or the environment (``password_env``)."""

    mechanism: SaslMechanism = "PLAIN"
    username: str
    password: SecretStr

    @model_validator(mode="before")
    @classmethod
    def _password_source(cls, data: Any) -> Any:
        return secret_source(data, "password")


class TlsSettings(BaseModel):
    cafile: Path | None = None
    certfile: Path | None = None
    keyfile: Path | None = None
    check_hostname: bool = True


def _compiles(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from None
    return pattern


# A regular expression matched against a whole group id or topic name (re.fullmatch).
NamePattern = Annotated[str, AfterValidator(_compiles)]


class NameFilter(BaseModel):
    """Which names are watched: those ``include`` matches (every name when it is empty) that ``exclude``
    does not (exclude wins). Patterns match the whole name."""

    model_config = ConfigDict(extra="forbid")

    include: list[NamePattern] = Field(default_factory=list)
    exclude: list[NamePattern] = Field(default_factory=list)


class PairFilter(BaseModel):
    """The offsets of groups matching ``group`` on topics matching ``topic`` are not watched."""

    model_config = ConfigDict(extra="forbid")

    group: NamePattern
    topic: NamePattern


class ClusterSettings(BaseModel):
    """One Kafka cluster to watch; ``groups``, ``topics`` and ``exclude_pairs`` are its scope
    (:class:`collectors.scope.Scope`)."""

    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._-]+$")
    bootstrap_servers: list[str] = Field(min_length=1)
    security_protocol: SecurityProtocol = "PLAINTEXT"
    sasl: SaslSettings | None = None
    tls: TlsSettings | None = None
    metrics_urls: list[str] = Field(default_factory=list)
    request_timeout_ms: int = Field(default=10_000, ge=500, le=300_000)
    groups: NameFilter = Field(default_factory=NameFilter)
    topics: NameFilter = Field(default_factory=NameFilter)
    exclude_pairs: list[PairFilter] = Field(default_factory=list)

    @field_validator("bootstrap_servers", mode="before")
    @classmethod
    def _split_servers(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [s.strip() for s in value.split(",") if s.strip()]
        return value

    @field_validator("bootstrap_servers")
    @classmethod
    def _host_port(cls, servers: list[str]) -> list[str]:
        for server in servers:
            host, sep, port = server.rpartition(":")
            if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(f"{server!r} is not host:port")
        return servers

    @field_validator("metrics_urls", mode="before")
    @classmethod
    def _split_urls(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [s.strip() for s in value.split(",") if s.strip()]
        return value

    @field_validator("metrics_urls")
    @classmethod
    def _http_urls(cls, urls: list[str]) -> list[str]:
        for url in urls:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"{url!r} is not an http(s) URL")
        return urls

    @model_validator(mode="after")
    def _security_consistent(self) -> ClusterSettings:
        if self.security_protocol.startswith("SASL") and self.sasl is None:
            raise ValueError(f"security_protocol {self.security_protocol} needs a 'sasl' section")
        if not self.security_protocol.startswith("SASL") and self.sasl is not None:
            raise ValueError("a 'sasl' section needs security_protocol SASL_PLAINTEXT or SASL_SSL")
        return self


class SnapshotSettings(BaseModel):
    """``__consumer_offsets`` snapshots (dumps)."""

    directory: Path = Path("var/snapshots")
    max_bytes: int = Field(default=1024**3, ge=1024)  # a snapshot stops (and says so) past this size
    keep: int = Field(default=50, ge=1)  # newest snapshots kept; older ones are deleted
