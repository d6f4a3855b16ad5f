from pathlib import Path

import pytest

from collectors.errors import ConfigError
from service.detection.build import blind_gap_seconds
from service.metrics import MetricsOptions
from service.settings import load_settings


def _cluster(**extra: object) -> dict[str, object]:
    return {"name": "prod", "bootstrap_servers": "k1:9092,k2:9092", **extra}


def test_load_settings_yaml_file_reads_clusters(tmp_path: Path) -> None:
    config = tmp_path / "og.yaml"
    config.write_text(
        "clusters:\n"
        "  - name: prod\n"
        "    bootstrap_servers: [k1:9092, k2:9092]\n"
        "    security_protocol: SASL_SSL\n"
        "    sasl: {mechanism: SCRAM-SHA-512, username: og, password: s3cret}\n"
        "    metrics_urls: [http://k1:7071/metrics]\n"
        "intervals: {offsets: 2}\n"
    )
    settings = load_settings(config)
    cluster = settings.clusters[0]
    assert cluster.bootstrap_servers == ["k1:9092", "k2:9092"]
    assert cluster.sasl is not None and cluster.sasl.password.get_secret_value() == "s3cret"
    assert "s3cret" not in repr(settings)
    assert settings.intervals.offsets == 2


def test_load_settings_env_overrides_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "og.yaml"
    config.write_text("intervals: {offsets: 2}\n")
    monkeypatch.setenv("OFFSETGUARD_INTERVALS__OFFSETS", "7")
    assert load_settings(config).intervals.offsets == 7


def test_load_settings_comma_string_splits_servers() -> None:
    assert load_settings(clusters=[_cluster()]).clusters[0].bootstrap_servers == ["k1:9092", "k2:9092"]


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"clusters": [_cluster(bootstrap_servers="no-port")]}, "clusters.0.bootstrap_servers"),
        ({"clusters": [_cluster(), _cluster()]}, "clusters"),
        ({"clusters": [_cluster(security_protocol="SASL_SSL")]}, "clusters.0"),
        ({"clusters": [_cluster(metrics_urls=["ftp://x"])]}, "clusters.0.metrics_urls"),
        ({"clusters": [_cluster(name="bad name")]}, "clusters.0.name"),
        ({"intervals": {"offsets": 0}}, "intervals.offsets"),
        ({"store": {"retention_days": 0.5, "full_resolution_hours": 24}}, "store"),
        ({"unknown_key": 1}, "unknown_key"),
    ],
)
def test_load_settings_bad_value_refused_naming_field(overrides: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(**overrides)
    assert caught.value.field == field
    assert field in str(caught.value)


def test_load_settings_missing_file_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_settings(tmp_path / "absent.yaml")


def test_load_settings_non_mapping_yaml_refused(tmp_path: Path) -> None:
    config = tmp_path / "og.yaml"
    config.write_text("- just\n- a list\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_settings(config)


def test_load_settings_detection_history_samples_reaches_thresholds_and_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert load_settings().detection.thresholds().history_samples == 240
    monkeypatch.setenv("OFFSETGUARD_DETECTION__HISTORY_SAMPLES", "60")
    assert load_settings().detection.thresholds().history_samples == 60
    for bad in ("3", "100000", "many"):
        monkeypatch.setenv("OFFSETGUARD_DETECTION__HISTORY_SAMPLES", bad)
        with pytest.raises(ConfigError, match="history_samples"):
            load_settings()


def test_load_settings_detection_topic_confirm_seconds_reaches_thresholds() -> None:
    settings = load_settings(detection={"topic_confirm_seconds": 15})
    assert settings.detection.thresholds().topic_confirm_seconds == 15
    assert load_settings().detection.thresholds().topic_confirm_seconds == 60


def test_load_settings_detection_blind_settings_reach_thresholds_and_are_bounded() -> None:
    default = load_settings()
    assert default.detection.thresholds().rate_min_span_seconds == 60
    assert blind_gap_seconds(default) == 30
    detection = {"rate_min_span_seconds": 20, "blind_gap_min_seconds": 8}
    settings = load_settings(detection=detection, intervals={"offsets": 1})
    assert settings.detection.thresholds().rate_min_span_seconds == 20
    assert blind_gap_seconds(settings) == 8  # the floor: the offsets collector is stale after 3 s
    slow = load_settings(detection=detection, intervals={"offsets": 60})
    assert blind_gap_seconds(slow) == 180  # stale after 3 intervals of 60 s
    bad_values = (("rate_min_span_seconds", 5), ("blind_gap_min_seconds", 0), ("rate_min_span_seconds", "x"))
    for field, bad in bad_values:
        with pytest.raises(ConfigError, match=field):
            load_settings(detection={field: bad})


def test_load_settings_metrics_defaults_own_families_per_partition() -> None:
    metrics = load_settings().metrics
    assert metrics.families == ["offsetguard"]
    assert metrics.granularity == "partition"
    assert metrics.options() == MetricsOptions(frozenset({"offsetguard"}))
    assert metrics.render_worker is False  # rendered in the service's process


def test_load_settings_metrics_render_worker_yaml_and_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "og.yaml"
    config.write_text("metrics:\n  render_worker: true\n")
    assert load_settings(config).metrics.render_worker is True
    monkeypatch.setenv("OFFSETGUARD_METRICS__RENDER_WORKER", "false")
    assert load_settings(config).metrics.render_worker is False  # env overrides the file


def test_load_settings_logging_defaults_text_with_access_log() -> None:
    settings = load_settings()
    assert (settings.log_level, settings.log_format, settings.access_log) == ("INFO", "text", True)


def test_load_settings_logging_yaml_and_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "og.yaml"
    config.write_text("log_level: DEBUG\nlog_format: json\naccess_log: false\n")
    settings = load_settings(config)
    assert (settings.log_level, settings.log_format, settings.access_log) == ("DEBUG", "json", False)
    monkeypatch.setenv("OFFSETGUARD_LOG_FORMAT", "text")
    assert load_settings(config).log_format == "text"  # env overrides the file


def test_load_settings_log_format_unknown_refused_naming_field_and_value() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(log_format="logfmt")
    assert caught.value.field == "log_format"
    assert "'text' or 'json', not 'logfmt'" in str(caught.value)


def test_load_settings_metrics_yaml_families_and_granularity(tmp_path: Path) -> None:
    config = tmp_path / "og.yaml"
    config.write_text("metrics:\n  families: [kafka_exporter]\n  granularity: topic\n")
    assert load_settings(config).metrics.options() == MetricsOptions(frozenset({"kafka_exporter"}), "topic")


@pytest.mark.parametrize(
    ("value", "families"),
    [
        ("kafka_exporter, offsetguard", ["kafka_exporter", "offsetguard"]),
        ('["kafka_lag_exporter"]', ["kafka_lag_exporter"]),
        ("", []),  # health and alert families only
    ],
)
def test_load_settings_metrics_env_comma_list_or_json(
    monkeypatch: pytest.MonkeyPatch, value: str, families: list[str]
) -> None:
    monkeypatch.setenv("OFFSETGUARD_METRICS__FAMILIES", value)
    monkeypatch.setenv("OFFSETGUARD_METRICS__GRANULARITY", "group")
    metrics = load_settings().metrics
    assert (metrics.families, metrics.granularity) == (families, "group")


@pytest.mark.parametrize(
    ("metrics", "field", "says"),
    [
        ({"families": ["kafka-exporter"]}, "metrics.families.0", "'kafka_exporter'"),
        ({"families": "offsetguard,kminion"}, "metrics.families.1", "not 'kminion'"),
        ({"families": ["offsetguard", "offsetguard"]}, "metrics.families", "repeated: offsetguard"),
        ({"granularity": "partitions"}, "metrics.granularity", "'partition', 'topic' or 'group', not"),
        ({"granularity": "broker"}, "metrics.granularity", "not 'broker'"),
        ({"granularity": "topic", "topic_granularity": "topic"}, "metrics.topic_granularity", "Extra"),
        ({"families": '["offsetguard"'}, "metrics.families", "neither a comma list nor a JSON list"),
        ({"render_worker": "sometimes"}, "metrics.render_worker", "valid boolean"),
    ],
)
def test_load_settings_metrics_bad_value_refused_naming_field_and_choices(
    metrics: dict[str, object], field: str, says: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(metrics=metrics)
    assert caught.value.field == field
    assert says in str(caught.value)


def _sasl(**password: object) -> dict[str, object]:
    return {"mechanism": "SCRAM-SHA-512", "username": "og", **password}


def test_load_settings_sasl_password_from_a_mounted_file(tmp_path: Path) -> None:
    secret = tmp_path / "password"
    secret.write_text("from-file\n")  # what `kubectl create secret --from-file` and editors leave
    cluster = load_settings(
        clusters=[_cluster(security_protocol="SASL_SSL", sasl=_sasl(password_file=str(secret)))]
    ).clusters[0]
    assert cluster.sasl is not None and cluster.sasl.password.get_secret_value() == "from-file"
    assert "from-file" not in repr(cluster)


def test_load_settings_api_token_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OG_TEST_TOKEN", "t" * 20)
    settings = load_settings(api={"tokens": [{"name": "oncall", "token_env": "OG_TEST_TOKEN"}]})
    assert settings.api.tokens[0].token.get_secret_value() == "t" * 20


@pytest.mark.parametrize(
    "password",
    [
        {},  # none at all
        {"password": "inline", "password_file": "/etc/x"},  # two sources
        {"password_file": "/nonexistent/offsetguard-password"},
        {"password_env": "OG_TEST_UNSET_VARIABLE"},
    ],
)
def test_load_settings_sasl_password_source_refused_naming_the_section(
    password: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OG_TEST_UNSET_VARIABLE", raising=False)
    with pytest.raises(ConfigError) as caught:
        load_settings(clusters=[_cluster(security_protocol="SASL_SSL", sasl=_sasl(**password))])
    assert caught.value.field == "clusters.0.sasl"
    assert "password" in str(caught.value) and "inline" not in str(caught.value)
