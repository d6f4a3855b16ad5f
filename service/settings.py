"""The one settings object: environment (``OFFSETGUARD_...``, nested with ``__``) over an optional YAML file.

Refuses unsafe or inconsistent values at start with a message that names the field. Nothing here reads
the environment at import time: call :func:`load_settings`. The sections read below the service live
beside their readers and are composed here: the clusters and snapshots in :mod:`collectors.settings`, the
store in :mod:`store.settings`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from alerts.thresholds import Limits, Override, Thresholds
from collectors.errors import ConfigError
from collectors.settings import ClusterSettings, SnapshotSettings, secret_source
from service.logs import LogFormat, LogLevel
from service.metrics.options import DEFAULT_FAMILIES, FamilySet, Granularity, MetricsOptions
from store.settings import StoreSettings


class IntervalSettings(BaseModel):
    """Seconds between runs of each collector."""

    metadata: float = Field(default=30.0, gt=0, le=86_400)
    offsets: float = Field(default=5.0, gt=0, le=86_400)
    groups: float = Field(default=15.0, gt=0, le=86_400)
    committed: float = Field(default=5.0, gt=0, le=86_400)
    configs: float = Field(default=300.0, gt=0, le=86_400)
    broker_metrics: float = Field(default=15.0, gt=0, le=86_400)
    # While the live tail reports the committed offsets, the committed poll only reconciles them: this
    # often, and at once after any tail gap (collectors.reconcile). At least ``committed``.
    reconcile: float = Field(default=60.0, gt=0, le=86_400)

    @model_validator(mode="after")
    def _reconcile_not_below_committed(self) -> IntervalSettings:
        if self.reconcile < self.committed:
            if "reconcile" in self.model_fields_set:
                raise ValueError(
                    f"intervals.reconcile ({self.reconcile:g} s) must be at least intervals.committed "
                    f"({self.committed:g} s): a reconciliation is a committed poll"
                )
            self.reconcile = self.committed  # the default follows a longer committed interval
        return self


class TailSettings(BaseModel):
    """The live tail of ``__consumer_offsets``."""

    enabled: bool = True
    # Where a first start (no stored position) begins: the log start (all retained history) or the end.
    start_from: Literal["earliest", "latest"] = "earliest"
    # How often positions are saved to the store (events are handed on before their position is saved).
    checkpoint_seconds: float = Field(default=1.0, gt=0, le=3600)
    max_batch_records: int = Field(default=10_000, ge=1, le=1_000_000)
    # While records keep coming, a fetch at most this often (a record after a quiet spell comes at once):
    # each fetch then brings what ~2,500 commits a second appended meanwhile, not a few each (0: none).
    batch_interval_seconds: float = Field(default=0.25, ge=0, le=5)


class LimitsSettings(BaseModel):
    """Alert limits (see :class:`alerts.thresholds.Limits`); ``null`` disables a check."""

    lag_messages: int | None = Field(default=10_000, ge=1)
    lag_seconds: float | None = Field(default=600.0, gt=0)
    retention_risk_seconds: float | None = Field(default=6 * 3600.0, gt=0)
    expiry_risk_seconds: float | None = Field(default=24 * 3600.0, gt=0)
    stall_seconds: float | None = Field(default=900.0, gt=0)


class OverrideSettings(BaseModel):
    """Per-topic or per-group overrides; only the fields given replace the inherited ones."""

    model_config = ConfigDict(extra="forbid")

    lag_messages: int | None = Field(default=None, ge=1)
    lag_seconds: float | None = Field(default=None, gt=0)
    retention_risk_seconds: float | None = Field(default=None, gt=0)
    expiry_risk_seconds: float | None = Field(default=None, gt=0)
    stall_seconds: float | None = Field(default=None, gt=0)


class DetectionSettings(BaseModel):
    """The detection engine: thresholds, alert lifecycle, its own state and snapshots on critical alerts."""

    enabled: bool = True
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    # keys: regular expressions matched against the whole name (an exact name matches itself); the first
    # that matches, in file order, gives the override
    topics: dict[str, OverrideSettings] = Field(default_factory=dict)
    groups: dict[str, OverrideSettings] = Field(default_factory=dict)  # group beats topic
    recommit_window_seconds: float = Field(default=30.0, ge=0, le=3600)
    recent_commit_seconds: float = Field(default=600.0, gt=0)
    # An offset vanishing under a consuming group pages only once its topic is seen to still exist (the
    # tombstones of a deleted topic arrive before the metadata poll shows it gone), or after this long.
    topic_confirm_seconds: float = Field(default=60.0, ge=0, le=3600)
    # Event-like alerts (rewind, skip, truncation, unclean election, offsets lost) resolve after this
    # long without recurrence, unless acknowledged first.
    quiet_period_seconds: float = Field(default=3600.0, gt=0)
    # State-like alerts resolve after this many consecutive evaluations that saw their input and no finding.
    resolve_after_clean: int = Field(default=3, ge=1, le=1000)
    # collector_failure fires only once part of the cluster has been unobservable (a collector failing or
    # reporting partial failures) this long without a break: a rolling restart or a controller failover
    # makes brokers unreachable for a while, and that is not worth waking anyone.
    collector_failure_grace_seconds: float = Field(default=120.0, ge=0, le=3600)
    # Tail events are evaluated together once they stop arriving for this long (capped at 4x).
    debounce_seconds: float = Field(default=0.15, ge=0, le=5)
    # An evaluation starts at most this often: collector observations and tail events arriving sooner join
    # the next one (each collector, and a busy tail, would otherwise start one of its own: at 50k
    # group-partitions several full evaluations per offsets interval). Bounds detection latency from above.
    min_evaluation_interval_seconds: float = Field(default=2.5, ge=0, le=60)
    # While log offsets keep arriving (the last within this long), the other collectors' observations and
    # tail events that are no incident wait for the next offsets observation, at most this long: the
    # collectors of one interval start together and finish apart, and each would otherwise start an
    # evaluation of its own (two a cycle, the log ranges in the second). An offsets observation evaluates
    # at once (the minimum interval allowing); a commit below the last known offset or a tombstone never
    # waits. Of use above the offsets interval (5 s); 0: no waiting.
    offsets_wait_seconds: float = Field(default=6.0, ge=0, le=60)
    # The detection state (histories of every partition and group-partition) is saved this often and at
    # stop; after a crash, moves since the last save may be reported once more. At 50k group-partitions a
    # save costs ~0.5 CPU s, so not every 30 s. A due save waits (at most 60 s) for a moment /metrics
    # expects no render (service.detection.save_timing).
    state_save_seconds: float = Field(default=120.0, gt=0, le=3600)
    # commit_history gets at most one sample per group-partition this often (a consume rate over an hour
    # needs its ends, not every evaluation: 60 samples an hour, each a tuple copy for 50k keys).
    history_sample_seconds: float = Field(default=60.0, ge=0, le=3600)
    # Samples kept per partition (log range, one per offsets cycle while it moves) and per group-partition
    # (committed offset, one per history_sample_seconds while it moves): what rates and forecasts are
    # measured over. On a cluster where everything moves all the time they fill, ~100 bytes each: 20k
    # partitions and 50k group-partitions hold ~17M samples at 240 (docs/metrics.md, Memory on busy clusters).
    history_samples: int = Field(default=240, ge=10, le=10_000)
    # The slow rules (lag_high, consumer_stalled, retention_risk, offsets_expiry_risk: limits of minutes
    # to hours) judge every group-partition this often and, in between, only those whose committed offset,
    # log range or group changed (alerts.sweep): a time-driven crossing is seen at most this late, plus
    # the wait for the next evaluation with log ranges (the offsets interval; twice this at most).
    # 0: every group-partition, every evaluation (at 50k group-partitions ~0.25 CPU s each).
    sweep_seconds: float = Field(default=30.0, ge=0, le=600)
    # Blind spells (alerts.blind: spans with no log range seen, brokers down or offsetguard stopped). A gap
    # between offsets observations makes one when longer than this, or than the offsets collector's going
    # stale (stale_after_intervals x intervals.offsets) if that is longer: a slow cycle is not blindness.
    blind_gap_min_seconds: float = Field(default=30.0, ge=1, le=3600)
    # The shortest history a rate or forecast (retention_risk) is judged from: shorter ones are too noisy
    # to project. After a blind spell the rates restart from clean samples, so retention_risk is neither
    # resolved nor refreshed for this long.
    rate_min_span_seconds: float = Field(default=60.0, ge=10, le=3600)
    snapshots: bool = True  # dump the group's __consumer_offsets partition on a critical offset alert
    snapshot_group_interval_seconds: float = Field(default=600.0, ge=0)  # per cluster+group
    snapshot_max_per_hour: int = Field(default=20, ge=0)  # all clusters together

    @field_validator("topics", "groups")
    @classmethod
    def _patterns(cls, overrides: dict[str, OverrideSettings]) -> dict[str, OverrideSettings]:
        for key in overrides:
            try:
                re.compile(key)
            except re.error as exc:
                raise ValueError(f"{key!r} is not a regular expression: {exc}") from None
        return overrides

    def thresholds(self) -> Thresholds:
        """The :class:`alerts.thresholds.Thresholds` these settings describe."""

        def override(o: OverrideSettings) -> Override:
            return Override(**{k: v for k, v in o.model_dump(exclude_unset=True).items()})

        return Thresholds(
            default=Limits(**self.limits.model_dump()),
            topics={t: override(o) for t, o in self.topics.items()},
            groups={g: override(o) for g, o in self.groups.items()},
            recommit_window_seconds=self.recommit_window_seconds,
            recent_commit_seconds=self.recent_commit_seconds,
            history_spacing_seconds=self.history_sample_seconds,
            history_samples=self.history_samples,
            sweep_seconds=self.sweep_seconds,
            topic_confirm_seconds=self.topic_confirm_seconds,
            rate_min_span_seconds=self.rate_min_span_seconds,
        )


Severity = Literal["info", "warning", "critical"]


def _http_url(url: str) -> str:
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"{url!r} is not an http(s) URL")
    return url


class ReceiverFilters(BaseModel):
    """Which alerts a receiver gets; an empty list accepts every value."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._-]+$")
    kinds: list[str] = Field(default_factory=list)
    severities: list[Severity] = Field(default_factory=list)
    timeout_seconds: float = Field(default=10.0, gt=0, le=300)

    def accepts(self, kind: str, severity: str) -> bool:
        return (not self.kinds or kind in self.kinds) and (not self.severities or severity in self.severities)


class HttpReceiverSettings(ReceiverFilters):
    """A receiver reached over HTTP; ``headers`` (e.g. a bearer secret) go with every request."""

    url: str
    headers: dict[str, SecretStr] = Field(default_factory=dict)

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _http_url(value)


class WebhookReceiverSettings(HttpReceiverSettings):
    """POSTs one JSON document per notification to ``url``."""

    type: Literal["webhook"] = "webhook"


class AlertmanagerReceiverSettings(HttpReceiverSettings):
    """POSTs alerts to ``<url>/api/v2/alerts``; firing ones are re-posted every ``resend_seconds``
    (Alertmanager resolves an alert it has not heard of for its resolve timeout)."""

    type: Literal["alertmanager"] = "alertmanager"
    resend_seconds: float = Field(default=60.0, ge=1, le=3600)


class RetrySettings(BaseModel):
    """Delivery retries: exponential backoff with jitter, given up after ``give_up_after_seconds`` (or
    ``max_attempts`` when set)."""

    model_config = ConfigDict(extra="forbid")

    initial_seconds: float = Field(default=1.0, gt=0, le=3600)
    max_seconds: float = Field(default=300.0, gt=0, le=86_400)
    multiplier: float = Field(default=2.0, ge=1, le=10)
    jitter: float = Field(default=0.2, ge=0, le=1)  # each delay is reduced by up to this fraction
    give_up_after_seconds: float = Field(default=86_400.0, gt=0)
    max_attempts: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> RetrySettings:
        if self.max_seconds < self.initial_seconds:
            raise ValueError("max_seconds must be at least initial_seconds")
        return self


Receiver = Annotated[WebhookReceiverSettings | AlertmanagerReceiverSettings, Field(discriminator="type")]


class NotifySettings(BaseModel):
    """Notifications of fired/updated/resolved alerts, from a queue kept in the store."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    receivers: list[Receiver] = Field(default_factory=list)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    runbook_base_url: str | None = None  # runbook_url = <base>/<kind>.md; None: api.runbook_base_url
    external_url: str | None = None  # offsetguard's own URL, for links (Alertmanager generatorURL)
    poll_seconds: float = Field(default=2.0, gt=0, le=60)  # longest wait between queue checks
    keep_delivered_hours: float = Field(default=72.0, gt=0)  # delivered/abandoned rows, then pruned

    @field_validator("runbook_base_url", "external_url")
    @classmethod
    def _urls(cls, value: str | None) -> str | None:
        return None if value is None else _http_url(value).rstrip("/")

    @field_validator("receivers")
    @classmethod
    def _unique_receivers(cls, receivers: list[Receiver]) -> list[Receiver]:
        names = [r.name for r in receivers]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"receiver names must be unique, repeated: {', '.join(dupes)}")
        return receivers


ApiScope = Literal["read", "write"]


class ApiToken(BaseModel):
    """One bearer token of the HTTP API. ``write`` (ack, silence, snapshot) includes ``read``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=100)  # who holds it: logged, and the default "who" of an ack
    token: SecretStr  # or token_file / token_env
    scopes: list[ApiScope] = Field(default_factory=lambda: list[ApiScope](["read"]), min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _token_source(cls, data: Any) -> Any:
        return secret_source(data, "token")

    @field_validator("token")
    @classmethod
    def _long_enough(cls, token: SecretStr) -> SecretStr:
        value = token.get_secret_value()
        if len(value) < 16 or value != value.strip():
            raise ValueError("an API token needs at least 16 characters and no surrounding blanks")
        return token

    def allows(self, scope: ApiScope) -> bool:
        return scope in self.scopes or (scope == "read" and "write" in self.scopes)


class ApiSettings(BaseModel):
    """The on-call HTTP API: bearer tokens, whether reads need one, where alert runbooks live."""

    model_config = ConfigDict(extra="forbid")

    tokens: list[ApiToken] = Field(default_factory=list)
    # Mutating endpoints always need a write token; reads need a read token only when this is set.
    reads_require_auth: bool = False
    # Alerts carry runbook_url = <runbook_base_url>/<kind>.md
    runbook_base_url: str = Field(default="docs/runbooks", min_length=1)

    @field_validator("runbook_base_url")
    @classmethod
    def _no_trailing_slash(cls, url: str) -> str:
        return url.rstrip("/") or "/"

    @model_validator(mode="after")
    def _usable(self) -> ApiSettings:
        names = [t.name for t in self.tokens]
        if len(set(names)) != len(names):
            raise ValueError("API token names must be unique")
        if len({t.token.get_secret_value() for t in self.tokens}) != len(self.tokens):
            raise ValueError("two API tokens have the same value")
        if self.reads_require_auth and not self.tokens:
            raise ValueError("reads_require_auth needs at least one token (else nothing can be read)")
        return self


class ArchiveSettings(BaseModel):
    """The commit archive the live tail appends to (Parquet per cluster and hour, see pipeline.archive)."""

    enabled: bool = False
    directory: Path = Path("var/archive")
    roll_seconds: float = Field(default=300.0, gt=0, le=3600)  # a file per cluster-hour at least this often
    max_rows_per_file: int = Field(default=1_000_000, ge=1, le=100_000_000)
    retention_hours: float = Field(default=24.0 * 30, gt=0)
    fsync: bool = True  # every tail batch is on disk before the tail checkpoints past it


class MetricsSettings(BaseModel):
    """What ``/metrics`` exposes (docs/metrics.md, "Choosing families and granularity"). The defaults
    (offsetguard's own families, per partition) are what the shipped dashboards and rules read."""

    model_config = ConfigDict(extra="forbid")

    # Family sets; the health and alert families are always exposed. Env: a comma list or JSON.
    families: Annotated[list[FamilySet], NoDecode] = Field(default_factory=lambda: list(DEFAULT_FAMILIES))
    # partition: every series; topic: per-partition series become per group+topic (per topic) sums and
    # maxima; group: per-group ones. Gauges that do not aggregate are dropped.
    granularity: Granularity = "partition"
    # Render each body in a separate worker process instead of on the service's metrics thread. The
    # render's CPU then holds the worker's interpreter, not the API's (on-call requests answered during a
    # render wait less), at the cost of a second interpreter and a second copy of the picture: ~60-90 MB
    # more resident at 50k group-partitions (docs/metrics.md, "Rendering in process or in a worker").
    render_worker: bool = False

    @field_validator("families", mode="before")
    @classmethod
    def _split_families(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                try:
                    return yaml.safe_load(text)  # JSON is YAML
                except yaml.YAMLError as exc:
                    raise ValueError(f"{text!r} is neither a comma list nor a JSON list") from exc
            return [s.strip() for s in text.split(",") if s.strip()]
        return value

    @field_validator("families")
    @classmethod
    def _unique_families(cls, families: list[FamilySet]) -> list[FamilySet]:
        dupes = sorted({f for f in families if families.count(f) > 1})
        if dupes:
            raise ValueError(f"family sets must be listed once, repeated: {', '.join(dupes)}")
        return families

    def options(self) -> MetricsOptions:
        """The :class:`service.metrics.options.MetricsOptions` these settings describe."""
        return MetricsOptions(frozenset(self.families), self.granularity)


class PipelineSettings(BaseModel):
    """Defaults of ``offsetguard pipeline history`` (Spark)."""

    master: str = "local[*]"
    shuffle_partitions: int = Field(default=8, ge=1, le=100_000)
    driver_memory: str = Field(default="2g", pattern=r"^[0-9]+[kmgt]$")
    kafka_jars: Path | None = None  # default: deploy/spark/lib, resolved with mvn when empty
    top_incidents: int = Field(default=10, ge=1, le=1000)
    incident_gap_seconds: float = Field(default=900.0, gt=0)
    ui: bool = False


class HASettings(BaseModel):
    """One active replica with fencing (issue 46, docs/ha.md): replicas sharing one store agree through it
    which one is active; only that one writes alerts, notifies and takes snapshots."""

    model_config = ConfigDict(extra="forbid")

    # None: on when the store is PostgreSQL (store.url), off for the SQLite file unless set
    enabled: bool | None = None
    # A replica that stops renewing is replaced this long after its last renewal (database clock)
    lease_seconds: float = Field(default=10.0, ge=1, le=300)
    renew_seconds: float = Field(default=2.0, gt=0, le=100)
    replica_id: str | None = Field(default=None, min_length=1, max_length=200)  # None: hostname-pid

    @model_validator(mode="after")
    def _renewals_fit_the_lease(self) -> HASettings:
        if self.renew_seconds * 3 > self.lease_seconds:
            raise ValueError("renew_seconds must be at most a third of lease_seconds (two late renewals fit)")
        return self


class Settings(BaseSettings):
    """Everything offsetguard can be told. Env: ``OFFSETGUARD_<FIELD>``, nested with ``__``."""

    model_config = SettingsConfigDict(
        env_prefix="OFFSETGUARD_", env_nested_delimiter="__", extra="forbid", validate_default=True
    )

    clusters: list[ClusterSettings] = Field(default_factory=list)
    intervals: IntervalSettings = Field(default_factory=IntervalSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    tail: TailSettings = Field(default_factory=TailSettings)
    snapshots: SnapshotSettings = Field(default_factory=SnapshotSettings)
    archive: ArchiveSettings = Field(default_factory=ArchiveSettings)
    pipeline: PipelineSettings = Field(default_factory=PipelineSettings)
    detection: DetectionSettings = Field(default_factory=DetectionSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    notify: NotifySettings = Field(default_factory=NotifySettings)
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    ha: HASettings = Field(default_factory=HASettings)  # several replicas on one shared store
    # A collector whose last success is older than this many intervals is reported stale.
    stale_after_intervals: float = Field(default=3.0, ge=1.0)
    http_host: str = "127.0.0.1"
    http_port: int = Field(default=8080, ge=0, lt=65536)
    # offsetguard's own loggers; the others (Kafka clients, uvicorn, ...) log WARNING and up unless DEBUG
    log_level: LogLevel = "INFO"
    # text: "time LEVEL logger: message"; json: one object per line with context fields (service.logs)
    log_format: LogFormat = "text"
    # uvicorn's line per HTTP request (probes and scrapes included), at INFO. Top level beside log_level
    # and http_port: it covers every route, /metrics and the probes as much as /api.
    access_log: bool = True

    @field_validator("clusters")
    @classmethod
    def _unique_names(cls, clusters: list[ClusterSettings]) -> list[ClusterSettings]:
        names = [c.name for c in clusters]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"cluster names must be unique, repeated: {', '.join(dupes)}")
        return clusters

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # env beats the YAML file, which arrives as init kwargs
        return (env_settings, init_settings)

    def cluster(self, name: str) -> ClusterSettings | None:
        return next((c for c in self.clusters if c.name == name), None)


def load_settings(config_file: Path | str | None = None, **overrides: Any) -> Settings:
    """Build :class:`Settings` from ``config_file`` (YAML), the environment and ``overrides``.

    Raises :class:`ConfigError` naming the first offending field.
    """
    data: dict[str, Any] = {}
    if config_file is not None:
        path = Path(config_file)
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read config file {path}: {exc.strerror}", field="config") from exc
        except yaml.YAMLError as exc:
            raise ConfigError(f"config file {path} is not valid YAML: {exc}", field="config") from exc
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"config file {path} must hold a mapping at top level", field="config")
        data.update(loaded)
    data.update(overrides)
    try:
        return Settings(**data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "settings"
        message = first["msg"]
        if first["type"] == "literal_error":  # a choice (never a secret): say what was given
            message += f", not {first['input']!r}"
        raise ConfigError(f"invalid setting {field}: {message}", field=field) from exc
