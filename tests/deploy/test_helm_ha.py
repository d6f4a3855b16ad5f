"""The chart with two replicas (issue 46): a shared PostgreSQL store required by the values schema, a
PodDisruptionBudget, the replica id from the pod name, anti-affinity across nodes, no ReadWriteOnce volume
shared by two pods; and one replica rendering exactly as before."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate  # type: ignore[import-untyped]
import psycopg
import pytest
import yaml

from sandbox import pki
from service.settings import Settings, load_settings
from store.db import connect_to
from tests.deploy.crd_schemas import SCHEMAS
from tests.deploy.tools import (
    ALL_FEATURES,
    CHART,
    PLAIN,
    by_kind,
    documents,
    helm,
    helm_template,
    one,
    run,
)
from tests.support.postgres import PASSWORD as PG_PASSWORD
from tests.support.postgres import SERVER_SETTINGS, PostgresServer, running_server
from tests.support.postgres import USER as PG_USER

KUBERNETES_VERSION = kubernetes_validate.latest_version()
PG_URL = "postgresql://offsetguard@pg.db.svc:5432/offsetguard"
TWO = ("--set", "replicaCount=2", "--set", f"store.url={PG_URL}")
TWO_SECRET = ("--set", "replicaCount=2", "--set", "store.urlSecret.name=offsetguard-pg")
POD_NAME = "offsetguard-5f7c9d8b6-x2k4q"
NEEDS_STORE = "needs a store shared by the replicas: set store.url or store.urlSecret"


@pytest.fixture(scope="module")
def two_docs() -> list[dict[str, Any]]:
    return helm_template(*TWO)


def _pod(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return dict(one(docs, "Deployment")["spec"]["template"]["spec"])


def _container(docs: list[dict[str, Any]], name: str = "offsetguard") -> dict[str, Any]:
    pod = _pod(docs)
    return next(c for c in pod["containers"] + pod["initContainers"] if c["name"] == name)


def _config(docs: list[dict[str, Any]]) -> dict[str, Any]:
    configmap = next(d for d in by_kind(docs, "ConfigMap") if "offsetguard.yaml" in d["data"])
    return dict(yaml.safe_load(configmap["data"]["offsetguard.yaml"]))


def _data_volume(docs: list[dict[str, Any]]) -> dict[str, Any]:
    mounts = {m["mountPath"]: m["name"] for m in _container(docs)["volumeMounts"]}
    return next(v for v in _pod(docs)["volumes"] if v["name"] == mounts["/var/lib/offsetguard"])


@pytest.mark.parametrize("command", ["template", "lint"])
@pytest.mark.parametrize(
    "values",
    [["--set", "replicaCount=2"], ["--set", "replicaCount=3", "--set", "store.urlSecret.key=url"]],
    ids=["two", "three-secret-without-name"],
)
def test_helm_replicas_without_store_refused_by_schema(command: str, values: list[str]) -> None:
    args = ["template", "offsetguard"] if command == "template" else ["lint", "--strict"]
    result = run([helm(), *args, str(CHART), *values])
    assert result.returncode != 0
    assert (
        f"replicaCount of 2 or more {NEEDS_STORE} (PostgreSQL, docs/ha.md)" in result.stdout + result.stderr
    )


def test_helm_template_replicas_without_store_schema_skipped_fails_in_template() -> None:
    result = run(
        [helm(), "template", "offsetguard", str(CHART), "--skip-schema-validation", "--set", "replicaCount=2"]
    )
    assert result.returncode != 0
    assert f"replicaCount 2 {NEEDS_STORE} (PostgreSQL; docs/ha.md)" in result.stderr


@pytest.mark.parametrize(
    "values", [TWO, TWO_SECRET, (*TWO, "-f", str(ALL_FEATURES))], ids=["url", "secret", "all"]
)
def test_helm_lint_replicas_with_store_passes_strict(values: tuple[str, ...]) -> None:
    result = run([helm(), "lint", "--strict", str(CHART), *values])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 chart(s) failed" in result.stdout


@pytest.mark.parametrize(
    ("url", "says"),
    [
        (
            "postgresql://offsetguard:s3cr3t-pw@pg:5432/og",
            "store.url holds a password: put the URL in a Secret",
        ),
        (
            "postgresql://offsetguard@pg:5432/og?sslmode=require&password=s3cr3t-pw",
            "store.url holds a password",
        ),
        ("mysql://offsetguard:s3cr3t-pw@db/og", "store.url is not a postgresql:// URL"),
    ],
    ids=["userinfo-password", "query-password", "not-postgresql"],
)
def test_helm_template_bad_store_url_refused_without_echoing_it(url: str, says: str) -> None:
    result = run(
        [
            helm(),
            "template",
            "offsetguard",
            str(CHART),
            "--set",
            "replicaCount=2",
            "--set",
            f"store.url={url}",
        ]
    )
    assert result.returncode != 0
    assert says in result.stderr
    assert "s3cr3t-pw" not in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("values", "says"),
    [
        (
            ["--set", f"store.url={PG_URL}", "--set", "store.urlSecret.name=offsetguard-pg"],
            "store.url and store.urlSecret are both set: keep one",
        ),
        (["--set", f"config.store.url={PG_URL}"], "set store.url or store.urlSecret at the top level"),
        (["--set", "config.store.password=pw"], "config.store.password: no password in values"),
        (
            ["--set", "store.passwordSecret.name=offsetguard-pg"],
            "store.passwordSecret is the password of store.url (or store.urlSecret): set one",
        ),
        ([*TWO, "--set", "config.ha.enabled=false"], "config.ha.enabled: false with replicaCount 2"),
        ([*TWO, "--set", "podDisruptionBudget.minAvailable=2"], "must be below replicaCount 2"),
        ([*TWO, "--set", "config.ha.lease_seconds=0"], "/config/ha/lease_seconds"),
        ([*TWO, "--set", "config.ha.enabled=yes"], "/config/ha/enabled"),
        (["--set", "replicaCount=-1"], "/replicaCount"),
        (["--set", "store.uri=x"], "uri"),
    ],
    ids=[
        "url-and-secret",
        "under-config",
        "password-in-config",
        "password-without-url",
        "ha-off",
        "pdb-blocks-drains",
        "lease-zero",
        "ha-enabled-yes",
        "negative",
        "unknown-key",
    ],
)
def test_helm_template_bad_ha_values_fail_naming_them(values: list[str], says: str) -> None:
    result = run([helm(), "template", "offsetguard", str(CHART), *values])
    assert result.returncode != 0
    assert says in result.stderr


@pytest.mark.parametrize(
    "values", [TWO, TWO_SECRET, (*TWO, "-f", str(ALL_FEATURES))], ids=["url", "secret", "all"]
)
def test_manifests_replicas_valid_against_kubernetes_and_crd_schemas(values: tuple[str, ...]) -> None:
    docs = helm_template(*values)
    assert "PodDisruptionBudget" in {d["kind"] for d in docs}
    for doc in docs:
        schema = SCHEMAS.get((doc["apiVersion"], doc["kind"]))
        if schema is not None:
            jsonschema.validate(doc, schema)
        else:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_pdb_replicas_min_available_one_selects_the_pods(two_docs: list[dict[str, Any]]) -> None:
    pdb = one(two_docs, "PodDisruptionBudget")
    assert pdb["apiVersion"] == "policy/v1"
    assert pdb["spec"]["minAvailable"] == 1
    pod_labels = one(two_docs, "Deployment")["spec"]["template"]["metadata"]["labels"]
    selector = pdb["spec"]["selector"]["matchLabels"]
    assert selector and selector.items() <= pod_labels.items()
    assert selector == one(two_docs, "Deployment")["spec"]["selector"]["matchLabels"]


@pytest.mark.parametrize(
    "values",
    [[], ["--set", f"store.url={PG_URL}"], [*TWO, "--set", "podDisruptionBudget.enabled=false"]],
    ids=["one", "one-on-postgresql", "disabled"],
)
def test_pdb_one_replica_or_disabled_not_rendered(values: list[str]) -> None:
    assert by_kind(helm_template(*values), "PodDisruptionBudget") == []


def test_deployment_replicas_rolling_one_at_a_time_ready_on_readyz(two_docs: list[dict[str, Any]]) -> None:
    spec = one(two_docs, "Deployment")["spec"]
    assert spec["replicas"] == 2
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1},
    }
    container = _container(two_docs)
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"


def test_deployment_replicas_replica_id_from_pod_name(two_docs: list[dict[str, Any]]) -> None:
    env = {e["name"]: e for e in _container(two_docs)["env"]}
    assert env["OFFSETGUARD_HA__REPLICA_ID"] == {
        "name": "OFFSETGUARD_HA__REPLICA_ID",
        "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
    }
    init_env = {e["name"] for e in _container(two_docs, "render-config").get("env", [])}
    assert "OFFSETGUARD_HA__REPLICA_ID" not in init_env


def test_deployment_one_replica_on_postgresql_no_replica_id_recreate() -> None:
    docs = helm_template("--set", f"store.url={PG_URL}")
    assert "OFFSETGUARD_HA__REPLICA_ID" not in {e["name"] for e in _container(docs)["env"]}
    assert one(docs, "Deployment")["spec"]["strategy"] == {"type": "Recreate"}
    assert _data_volume(docs)["persistentVolumeClaim"]["claimName"] == "offsetguard"
    assert "ha" not in _config(docs)


def test_configmap_replicas_store_url_and_ha_enabled(two_docs: list[dict[str, Any]]) -> None:
    config = _config(two_docs)
    assert config["store"]["url"] == PG_URL
    assert config["store"]["retention_days"] == 14  # config.store's other keys kept beside the url
    assert config["ha"] == {"enabled": True}


def test_configmap_replicas_ha_settings_merged() -> None:
    config = _config(
        helm_template(*TWO, "--set", "config.ha.lease_seconds=12", "--set", "config.ha.enabled=true")
    )
    assert config["ha"] == {"enabled": True, "lease_seconds": 12}


def test_configmap_store_url_secret_only_as_reference() -> None:
    docs = helm_template(*TWO_SECRET, "--set", "store.urlSecret.key=dsn")
    assert _config(docs)["store"]["url"] == {"fromEnv": "OG_SECRET_STORE_URL"}
    init = {e["name"]: e for e in _container(docs, "render-config")["env"]}
    assert init["OG_SECRET_STORE_URL"]["valueFrom"] == {
        "secretKeyRef": {"name": "offsetguard-pg", "key": "dsn"}
    }
    assert "OG_SECRET_STORE_URL" not in {e["name"] for e in _container(docs)["env"]}
    default_key = helm_template(*TWO_SECRET)
    init = {e["name"]: e for e in _container(default_key, "render-config")["env"]}
    assert init["OG_SECRET_STORE_URL"]["valueFrom"]["secretKeyRef"]["key"] == "url"


def test_configmap_store_password_secret_only_as_reference() -> None:
    docs = helm_template(*TWO, "--set", "store.passwordSecret.name=offsetguard-pg")
    store = _config(docs)["store"]
    assert (store["url"], store["password"]) == (PG_URL, {"fromEnv": "OG_SECRET_STORE_PASSWORD"})
    init = {e["name"]: e for e in _container(docs, "render-config")["env"]}
    ref = init["OG_SECRET_STORE_PASSWORD"]["valueFrom"]["secretKeyRef"]
    assert ref == {"name": "offsetguard-pg", "key": "password"}
    assert not {"OG_SECRET_STORE_PASSWORD", "OG_SECRET_STORE_URL"} & {
        e["name"] for e in _container(docs)["env"]
    }


def test_deployment_replicas_no_read_write_once_claim(two_docs: list[dict[str, Any]]) -> None:
    assert by_kind(two_docs, "PersistentVolumeClaim") == []
    assert _data_volume(two_docs) == {"name": "data", "emptyDir": {}}
    existing = helm_template(*TWO, "--set", "persistence.existingClaim=offsetguard-data")
    assert "persistentVolumeClaim" not in _data_volume(existing)


@pytest.mark.parametrize("existing", [False, True], ids=["created", "existing"])
def test_deployment_replicas_read_write_many_claim_shared(existing: bool) -> None:
    args = [*TWO, "--set", "persistence.accessModes={ReadWriteMany}"]
    if existing:
        args += ["--set", "persistence.existingClaim=offsetguard-rwx"]
    docs = helm_template(*args)
    claim = _data_volume(docs)["persistentVolumeClaim"]["claimName"]
    if existing:
        assert claim == "offsetguard-rwx" and by_kind(docs, "PersistentVolumeClaim") == []
    else:
        pvc = one(docs, "PersistentVolumeClaim")
        assert (claim, pvc["spec"]["accessModes"]) == (pvc["metadata"]["name"], ["ReadWriteMany"])


def test_deployment_replicas_preferred_anti_affinity_across_nodes(two_docs: list[dict[str, Any]]) -> None:
    anti = _pod(two_docs)["affinity"]["podAntiAffinity"]
    assert "requiredDuringSchedulingIgnoredDuringExecution" not in anti
    [term] = anti["preferredDuringSchedulingIgnoredDuringExecution"]
    assert term["weight"] == 100
    assert term["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
    pod_labels = one(two_docs, "Deployment")["spec"]["template"]["metadata"]["labels"]
    selector = term["podAffinityTerm"]["labelSelector"]["matchLabels"]
    assert selector and selector.items() <= pod_labels.items()


def test_deployment_replicas_user_affinity_kept() -> None:
    all_two = _pod(helm_template(*TWO, "-f", str(ALL_FEATURES)))["affinity"]
    assert all_two["nodeAffinity"] == yaml.safe_load(ALL_FEATURES.read_text())["affinity"]["nodeAffinity"]
    assert "podAntiAffinity" in all_two
    own = {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "topology.kubernetes.io/zone"}]}
    docs = helm_template(*TWO, "--set-json", "affinity=" + json.dumps({"podAntiAffinity": own}))
    assert _pod(docs)["affinity"] == {"podAntiAffinity": own}


def test_deployment_one_replica_no_anti_affinity() -> None:
    assert "affinity" not in _pod(helm_template())


@pytest.mark.parametrize("values", [[], ["--set", "replicaCount=1"]], ids=["defaults", "replica-count-1"])
def test_helm_template_one_replica_renders_plain_manifests_unchanged(values: list[str]) -> None:
    # deploy/k8s/offsetguard.yaml is the default render committed before the replicas existed
    assert helm_template(*values) == documents((PLAIN / "offsetguard.yaml").read_text())


def _pod_settings(
    docs: list[dict[str, Any]], secrets: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Settings:
    """The settings a pod of ``docs`` starts with: the init container's render-config run with ``secrets``
    (which it must be given by reference), then the file loaded under the main container's environment,
    the downward API's pod name included."""
    init_env = {e["name"] for e in _container(docs, "render-config").get("env", [])}
    assert set(secrets) <= init_env
    configmap = next(d for d in by_kind(docs, "ConfigMap") if "offsetguard.yaml" in d["data"])
    (tmp_path / "template.yaml").write_text(configmap["data"]["offsetguard.yaml"])
    (tmp_path / "render-config.py").write_text(configmap["data"]["render-config.py"])
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OFFSETGUARD_", "OG_SECRET_"))}
    out = tmp_path / "offsetguard.yaml"
    result = subprocess.run(
        [sys.executable, str(tmp_path / "render-config.py"), str(tmp_path / "template.yaml"), str(out)],
        env={**clean, **secrets},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    for name in os.environ:
        if name.startswith("OFFSETGUARD_"):
            monkeypatch.delenv(name)
    for e in _container(docs)["env"]:
        if "value" in e:
            monkeypatch.setenv(e["name"], e["value"])
        else:
            assert e["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
            monkeypatch.setenv(e["name"], POD_NAME)
    return load_settings(out)


def test_render_config_store_secrets_give_postgresql_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = helm_template("--set", "store.urlSecret.name=og-pg", "--set", "store.passwordSecret.name=og-pg")
    secrets = {"OG_SECRET_STORE_URL": PG_URL, "OG_SECRET_STORE_PASSWORD": "pg-pass: 'x' @/"}
    store = _pod_settings(docs, secrets, tmp_path, monkeypatch).store
    assert store.url == PG_URL
    assert store.password is not None and store.password.get_secret_value() == "pg-pass: 'x' @/"


def test_render_config_replicas_pod_env_gives_ha_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = helm_template(*TWO, "--set", "config.ha.lease_seconds=12")
    settings = _pod_settings(docs, {}, tmp_path, monkeypatch)
    assert settings.store.url == PG_URL
    ha = settings.ha
    assert (ha.enabled, ha.lease_seconds, ha.renew_seconds, ha.replica_id) == (True, 12, 2, POD_NAME)


@pytest.fixture(scope="module")
def tls_postgres() -> Iterator[tuple[PostgresServer, Path]]:
    """A real PostgreSQL server that speaks TLS only with a certificate for 127.0.0.1 from a fresh CA; the
    CA's PEM beside it, and a second, unrelated CA (``other/ca.pem``)."""
    root = Path(tempfile.mkdtemp(prefix="og-pg-tls-"))
    try:
        pki.create(root / "pki", ())
        pki.create(root / "other", ())
        key = root / "pki" / "server.pem"  # the key then the certificate: PostgreSQL reads each from it
        if os.geteuid() == 0:  # the server runs as nobody (tests.support.postgres), who must own its key
            for path in (root, root / "pki", key):
                shutil.chown(path, "nobody", "nogroup")
        tls = f" -c ssl=on -c ssl_cert_file={key} -c ssl_key_file={key}"
        with running_server(root / "pg", options=SERVER_SETTINGS + tls) as server:
            yield server, root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_store_ca_secret_pod_checks_postgresql_server_certificate(
    tls_postgres: tuple[PostgresServer, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, root = tls_postgres
    url = f"postgresql://{PG_USER}@{server.host}:{server.port}/postgres?sslmode=verify-full"
    docs = helm_template(
        *("--set", "replicaCount=2", "--set", f"store.url={url}"),
        *("--set", "store.passwordSecret.name=og-pg", "--set", "store.caSecret.name=og-pg-ca"),
    )
    settings = _pod_settings(docs, {"OG_SECRET_STORE_PASSWORD": PG_PASSWORD}, tmp_path, monkeypatch)
    # the Secret og-pg-ca as the kubelet mounts it: its key ca.crt a file under the volume's mountPath
    [volume] = [v for v in _pod(docs)["volumes"] if v.get("secret", {}).get("secretName") == "og-pg-ca"]
    [mount] = [m for m in _container(docs)["volumeMounts"] if m["name"] == volume["name"]]
    rendered = os.environ["PGSSLROOTCERT"]
    assert (mount["readOnly"], rendered) == (True, f"{mount['mountPath']}/ca.crt")
    mounted = tmp_path / "pod" / rendered.lstrip("/")
    mounted.parent.mkdir(parents=True)
    shutil.copy(root / "pki" / "ca.pem", mounted)
    monkeypatch.setenv("PGSSLROOTCERT", str(mounted))
    conn = connect_to(settings.store)
    try:
        [(ssl,)] = conn.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchall()
    finally:
        conn.close()
    assert ssl is True
    # a server the CA did not sign is refused (the other CA has the same name: its signature fails)
    shutil.copy(root / "other" / "ca.pem", mounted)
    with pytest.raises(psycopg.OperationalError, match="SSL error"):
        connect_to(settings.store).close()
    monkeypatch.delenv("PGSSLROOTCERT")  # and without the variable, verify-full has no CA to check with
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(psycopg.OperationalError, match=r"root certificate file .* does not exist"):
        connect_to(settings.store).close()
