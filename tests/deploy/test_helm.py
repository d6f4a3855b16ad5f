"""The Helm chart: lint, render (defaults and every optional feature), Kubernetes and CRD schemas, the
hardening platform teams expect, secrets only by reference, and the plain manifests kept up to date."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml

from service.metrics import MetricsOptions
from service.settings import load_settings
from tests.deploy.crd_schemas import SCHEMAS
from tests.deploy.tools import (
    ALL_FEATURES,
    CHART,
    DASHBOARD,
    PLAIN,
    ROOT,
    RULES,
    by_kind,
    documents,
    helm,
    helm_template,
    one,
    run,
)

KUBERNETES_VERSION = kubernetes_validate.latest_version()  # the newest schemas the package ships
RENDER_CONFIG = CHART / "files" / "render-config.py"


@pytest.fixture(scope="module")
def default_docs() -> list[dict[str, Any]]:
    return helm_template()


@pytest.fixture(scope="module")
def all_docs() -> list[dict[str, Any]]:
    return helm_template("-f", str(ALL_FEATURES))


def _validate(doc: dict[str, Any]) -> None:
    schema = SCHEMAS.get((doc["apiVersion"], doc["kind"]))
    if schema is not None:
        jsonschema.validate(doc, schema)
    else:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def _container(docs: list[dict[str, Any]], name: str = "offsetguard") -> dict[str, Any]:
    spec = one(docs, "Deployment")["spec"]["template"]["spec"]
    return next(c for c in spec["containers"] + spec["initContainers"] if c["name"] == name)


@pytest.mark.parametrize("values", [[], ["-f", str(ALL_FEATURES)]], ids=["defaults", "all-features"])
def test_helm_lint_values_passes_strict(values: list[str]) -> None:
    result = run([helm(), "lint", "--strict", str(CHART), *values])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 chart(s) failed" in result.stdout


def test_helm_template_defaults_renders_core_kinds_only(default_docs: list[dict[str, Any]]) -> None:
    kinds = sorted(d["kind"] for d in default_docs)
    assert kinds == ["ConfigMap", "Deployment", "PersistentVolumeClaim", "Service", "ServiceAccount"]


def test_helm_template_all_features_renders_monitoring_kinds(all_docs: list[dict[str, Any]]) -> None:
    kinds = sorted(d["kind"] for d in all_docs)
    assert kinds == [
        "ConfigMap",
        "ConfigMap",
        "Deployment",
        "PersistentVolumeClaim",
        "PrometheusRule",
        "Service",
        "ServiceAccount",
        "ServiceMonitor",
    ]


@pytest.mark.parametrize(
    "variant", ["defaults", "all-features", "no-persistence", "existing-claim", "plain-manifests"]
)
def test_manifests_variant_valid_against_kubernetes_and_crd_schemas(variant: str) -> None:
    if variant == "plain-manifests":
        docs = documents((PLAIN / "offsetguard.yaml").read_text())
    else:
        args = {
            "defaults": [],
            "all-features": ["-f", str(ALL_FEATURES)],
            "no-persistence": ["--set", "persistence.enabled=false"],
            "existing-claim": ["--set", "persistence.existingClaim=offsetguard-data"],
        }[variant]
        docs = helm_template(*args)
    assert docs
    for doc in docs:
        _validate(doc)


def test_validation_invalid_manifest_rejected(default_docs: list[dict[str, Any]]) -> None:
    deployment = copy.deepcopy(one(default_docs, "Deployment"))
    deployment["spec"]["replicas"] = "one"
    with pytest.raises(kubernetes_validate.ValidationError):
        _validate(deployment)
    rule = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "x"},
        "spec": {"groups": [{"name": "g", "rules": [{"alert": "A", "expr": "up", "for": "five minutes"}]}]},
    }
    with pytest.raises(jsonschema.ValidationError):
        _validate(rule)


def test_deployment_defaults_one_replica_recreate_probes(default_docs: list[dict[str, Any]]) -> None:
    spec = one(default_docs, "Deployment")["spec"]
    assert (spec["replicas"], spec["strategy"]) == (1, {"type": "Recreate"})
    container = _container(default_docs)
    assert "command" not in container and "args" not in container  # the image's exec-form entrypoint
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["startupProbe"]["httpGet"]["path"] == "/healthz"
    assert container["resources"]["requests"] and container["resources"]["limits"]


def test_deployment_defaults_hardened_security_context(default_docs: list[dict[str, Any]]) -> None:
    pod = one(default_docs, "Deployment")["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod["automountServiceAccountToken"] is False
    for container in pod["containers"] + pod["initContainers"]:
        ctx = container["securityContext"]
        assert ctx["readOnlyRootFilesystem"] is True
        assert ctx["runAsNonRoot"] is True
        assert ctx["allowPrivilegeEscalation"] is False
        assert ctx["capabilities"] == {"drop": ["ALL"]}
        assert ctx["seccompProfile"] == {"type": "RuntimeDefault"}
    mounts = {m["mountPath"]: m["name"] for m in _container(default_docs)["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes[mounts["/tmp"]]
    assert volumes[mounts["/var/lib/offsetguard"]]["persistentVolumeClaim"]["claimName"] == "offsetguard"
    assert volumes[mounts["/etc/offsetguard"]]["emptyDir"]["medium"] == "Memory"


def test_configmap_all_features_secrets_only_as_references(all_docs: list[dict[str, Any]]) -> None:
    configmap = next(d for d in by_kind(all_docs, "ConfigMap") if "offsetguard.yaml" in d["data"])
    config = yaml.safe_load(configmap["data"]["offsetguard.yaml"])
    prod = config["clusters"][0]
    assert prod["sasl"] == {
        "mechanism": "SCRAM-SHA-512",
        "username": "offsetguard",
        "password": {"fromEnv": "OG_SECRET_SASL_PASSWORD_0"},
    }
    assert prod["tls"] == {
        "cafile": "/etc/offsetguard-tls/prod/ca.crt",
        "certfile": "/etc/offsetguard-tls/prod/tls.crt",
        "keyfile": "/etc/offsetguard-tls/prod/tls.key",
    }
    assert [t["token"] for t in config["api"]["tokens"]] == [
        {"fromEnv": "OG_SECRET_API_TOKEN_0"},
        {"fromEnv": "OG_SECRET_API_TOKEN_1"},
    ]
    init = _container(all_docs, "render-config")
    refs = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in init["env"] if "valueFrom" in e}
    assert refs["OG_SECRET_SASL_PASSWORD_0"] == {"name": "kafka-prod-offsetguard", "key": "scram-password"}
    assert refs["OG_SECRET_API_TOKEN_0"] == {"name": "offsetguard-api-tokens", "key": "oncall"}
    assert refs["OG_SECRET_API_TOKEN_1"] == {"name": "offsetguard-api-tokens", "key": "grafana"}
    main_env = {e["name"] for e in _container(all_docs)["env"]}
    assert not any(name.startswith("OG_SECRET_") for name in main_env)
    tls_mount = next(m for m in _container(all_docs)["volumeMounts"] if m["mountPath"].endswith("/prod"))
    pod = one(all_docs, "Deployment")["spec"]["template"]["spec"]
    tls_volume = next(v for v in pod["volumes"] if v["name"] == tls_mount["name"])
    assert tls_volume["secret"]["secretName"] == "kafka-prod-ca"


def test_render_config_all_features_gives_valid_settings(
    all_docs: list[dict[str, Any]], tmp_path: Path
) -> None:
    configmap = next(d for d in by_kind(all_docs, "ConfigMap") if "offsetguard.yaml" in d["data"])
    (tmp_path / "template.yaml").write_text(configmap["data"]["offsetguard.yaml"])
    (tmp_path / "render-config.py").write_text(configmap["data"]["render-config.py"])
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("OFFSETGUARD_")},
        "OG_SECRET_SASL_PASSWORD_0": 'p"a\\ss: {word}',
        "OG_SECRET_API_TOKEN_0": "oncall-token-0123456789",
        "OG_SECRET_API_TOKEN_1": "grafana-token-0123456789",
        "ALERTMANAGER_AUTHORIZATION": "Bearer am-secret",
    }
    out = tmp_path / "offsetguard.yaml"
    result = subprocess.run(
        [sys.executable, str(tmp_path / "render-config.py"), str(tmp_path / "template.yaml"), str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert out.stat().st_mode & 0o777 == 0o600
    settings = load_settings(out)
    [prod, staging] = settings.clusters
    assert prod.sasl is not None and prod.sasl.password.get_secret_value() == 'p"a\\ss: {word}'
    assert staging.bootstrap_servers == ["kafka.staging:9092"]
    assert [t.token.get_secret_value() for t in settings.api.tokens] == [
        "oncall-token-0123456789",
        "grafana-token-0123456789",
    ]
    assert settings.notify.receivers[0].headers["Authorization"].get_secret_value() == "Bearer am-secret"
    assert settings.store.retention_days == 7
    assert settings.metrics.options() == MetricsOptions(frozenset({"offsetguard", "kafka_exporter"}), "topic")


def _config(docs: list[dict[str, Any]]) -> dict[str, Any]:
    configmap = next(d for d in by_kind(docs, "ConfigMap") if "offsetguard.yaml" in d["data"])
    return dict(yaml.safe_load(configmap["data"]["offsetguard.yaml"]))


def test_configmap_defaults_metrics_own_families_per_partition(
    default_docs: list[dict[str, Any]], tmp_path: Path
) -> None:
    config = _config(default_docs)
    assert config["metrics"] == {
        "families": ["offsetguard"],
        "granularity": "partition",
        "render_worker": False,
    }
    (tmp_path / "offsetguard.yaml").write_text(yaml.safe_dump(config))
    expected = MetricsOptions(frozenset({"offsetguard"}))
    assert load_settings(tmp_path / "offsetguard.yaml").metrics.options() == expected


def test_configmap_defaults_json_logs_at_info_with_access_log(
    default_docs: list[dict[str, Any]], tmp_path: Path
) -> None:
    config = _config(default_docs)
    assert (config["log_format"], config["log_level"], config["access_log"]) == ("json", "INFO", True)
    (tmp_path / "offsetguard.yaml").write_text(yaml.safe_dump(config))
    settings = load_settings(tmp_path / "offsetguard.yaml")
    assert (settings.log_format, settings.log_level, settings.access_log) == ("json", "INFO", True)


@pytest.mark.parametrize("value", ["config.log_format=logfmt", "config.log_level=TRACE"])
def test_helm_template_bad_log_values_fail_naming_them(value: str) -> None:
    result = run([helm(), "template", "offsetguard", str(CHART), "--set", value])
    assert result.returncode != 0
    assert f"/config/{value.split('.')[1].split('=')[0]}" in result.stderr


def test_configmap_metrics_render_worker_value_rendered_into_settings(tmp_path: Path) -> None:
    config = _config(helm_template("--set", "metrics.renderWorker=true"))
    assert config["metrics"]["render_worker"] is True
    (tmp_path / "offsetguard.yaml").write_text(yaml.safe_dump(config))
    assert load_settings(tmp_path / "offsetguard.yaml").metrics.render_worker is True


@pytest.mark.parametrize(
    ("values", "families", "granularity"),
    [
        (["--set", "metrics.granularity=group"], ["offsetguard"], "group"),
        (
            ["--set", "metrics.families={kafka_exporter}", "--set", "metrics.granularity=topic"],
            ["kafka_exporter"],
            "topic",
        ),
        (["--set-json", "metrics.families=[]"], [], "partition"),
    ],
    ids=["group", "kafka-exporter-topic", "health-only"],
)
def test_configmap_metrics_values_rendered_into_valid_settings(
    values: list[str], families: list[str], granularity: str, tmp_path: Path
) -> None:
    config = _config(helm_template(*values))
    assert config["metrics"] == {"families": families, "granularity": granularity, "render_worker": False}
    (tmp_path / "offsetguard.yaml").write_text(yaml.safe_dump(config))
    metrics = load_settings(tmp_path / "offsetguard.yaml").metrics
    assert (metrics.families, metrics.granularity) == (families, granularity)


@pytest.mark.parametrize(
    ("values", "says"),
    [
        (["--set", "metrics.granularity=partitions"], "/metrics/granularity"),
        (["--set", "metrics.renderWorker=yes"], "/metrics/renderWorker"),
        (["--set", "metrics.families={offsetguard,kafka-exporter}"], "/metrics/families/1"),
        (["--set", "metrics.families={offsetguard,offsetguard}"], "/metrics/families"),
        (["--set", "metrics.topics=partition"], "topics"),
        (["--set", "config.metrics.granularity=topic"], "not under config.metrics"),
    ],
    ids=["granularity", "render-worker", "family", "repeated-family", "unknown-key", "under-config"],
)
def test_helm_template_bad_metrics_values_fail_naming_them(values: list[str], says: str) -> None:
    result = run([helm(), "template", "offsetguard", str(CHART), *values])
    assert result.returncode != 0
    assert says in result.stderr


def test_render_config_missing_variable_fails_naming_it(tmp_path: Path) -> None:
    template = tmp_path / "template.yaml"
    template.write_text("api:\n  tokens:\n  - {name: a, token: {fromEnv: OG_SECRET_UNSET}}\n")
    env = {k: v for k, v in os.environ.items() if k != "OG_SECRET_UNSET"}
    result = subprocess.run(
        [sys.executable, str(RENDER_CONFIG), str(template), str(tmp_path / "out.yaml")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "config.api.tokens[0].token: environment variable OG_SECRET_UNSET is not set" in result.stderr
    assert not (tmp_path / "out.yaml").exists()


def test_prometheusrule_all_features_is_rules_file_with_overrides(all_docs: list[dict[str, Any]]) -> None:
    rendered = one(all_docs, "PrometheusRule")["spec"]["groups"]
    source = yaml.safe_load(RULES.read_text())["groups"]
    assert [g["name"] for g in rendered] == [g["name"] for g in source]
    for got_group, want_group in zip(rendered, source, strict=True):
        for got, want in zip(got_group["rules"], want_group["rules"], strict=True):
            assert got["expr"] == want["expr"]
            assert got["labels"] == {**want["labels"], "team": "platform"}
            assert got["annotations"]["runbook_url"] == want["annotations"]["runbook_url"].replace(
                "https://github.com/offsetguard/offsetguard/blob/main/docs/runbooks",
                "https://runbooks.example.com/offsetguard",
            )


def test_grafana_configmap_all_features_sidecar_label_and_dashboard(all_docs: list[dict[str, Any]]) -> None:
    dashboard = next(d for d in by_kind(all_docs, "ConfigMap") if "offsetguard.json" in d["data"])
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert dashboard["metadata"]["annotations"] == {"grafana_folder": "Kafka"}
    assert dashboard["data"]["offsetguard.json"].strip() == DASHBOARD.read_text().strip()


def test_servicemonitor_all_features_scrapes_http_metrics(all_docs: list[dict[str, Any]]) -> None:
    monitor = one(all_docs, "ServiceMonitor")
    service = one(all_docs, "Service")
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    [endpoint] = monitor["spec"]["endpoints"]
    assert (endpoint["port"], endpoint["path"], endpoint["interval"]) == ("http", "/metrics", "15s")
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"


@pytest.mark.parametrize(
    ("copy", "source"),
    [("files/offsetguard-rules.yaml", RULES), ("files/offsetguard.json", DASHBOARD)],
    ids=["rules", "dashboard"],
)
def test_chart_file_copy_matches_source(copy: str, source: Path) -> None:
    assert (CHART / copy).read_text() == source.read_text(), "run deploy/k8s/render.sh"


def test_plain_manifests_rendered_from_defaults_up_to_date(tmp_path: Path) -> None:
    result = run(["bash", str(PLAIN / "render.sh"), str(tmp_path)], env={**os.environ, "HELM": helm()})
    assert result.returncode == 0, result.stderr
    assert (PLAIN / "offsetguard.yaml").read_text() == (tmp_path / "offsetguard.yaml").read_text(), (
        "deploy/k8s/offsetguard.yaml is stale: run deploy/k8s/render.sh"
    )
    kustomization = yaml.safe_load((PLAIN / "kustomization.yaml").read_text())
    assert kustomization["resources"] == ["offsetguard.yaml"]
    assert (ROOT / "deploy" / "k8s" / kustomization["resources"][0]).exists()


def test_configmap_all_features_cluster_scope_rendered_into_settings(
    all_docs: list[dict[str, Any]], tmp_path: Path
) -> None:
    config = _config(all_docs)
    staging = next(c for c in config["clusters"] if c["name"] == "staging")
    (tmp_path / "offsetguard.yaml").write_text(yaml.safe_dump({"clusters": [staging]}))
    [cluster] = load_settings(tmp_path / "offsetguard.yaml").clusters
    assert cluster.groups.exclude == ["console-consumer-.*"] and cluster.topics.exclude == ["__.*"]
    assert [(p.group, p.topic) for p in cluster.exclude_pairs] == [("audit-.*", "payments")]


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("clusters[0].exclude_pairs[0].group=a", "/clusters/0/exclude_pairs/0"),
        ("clusters[0].groups.exlude[0]=a", "/clusters/0/groups"),
    ],
)
def test_helm_template_bad_scope_values_fail_naming_them(value: str, says: str) -> None:
    result = run([helm(), "template", "offsetguard", str(CHART), "--set", value])
    assert result.returncode != 0
    assert says in result.stderr
