"""The deployable stack end to end on the 1-node sandbox, with one offsetguard and one Prometheus:

1. smoke: the built wheel, in a fresh virtualenv, started with the image's exact ENTRYPOINT and ENV as
   ``nobody``, becomes ready, and the image's HEALTHCHECK command passes;
2. a replayed incident (a group commits 50, then 20: ``offset_rewind``, and lag > 0);
3. a real Prometheus scraping it evaluates every rule (the rewind rule fires) and runs every PromQL
   expression of the Grafana dashboard, which returns data wherever the incident produces some.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kafka import KafkaAdminClient, KafkaProducer

from sandbox.cluster import SandboxCluster
from service.settings import load_settings
from tests.collectors.tail.sandbox_it import commit, ensure_topic
from tests.deploy.dockerfile import requirements_export_code
from tests.deploy.prom import RulesPrometheus, prometheus_with_rules
from tests.deploy.smoke import (
    NOBODY,
    Served,
    build_wheel,
    export_requirements,
    fresh_venv,
    image_healthcheck,
    serve_as_nobody,
    wait_ready,
    world_readable_dir,
)
from tests.deploy.tools import DASHBOARD, ROOT, RULES

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

RUN = uuid.uuid4().hex[:8]
TOPIC = f"deploy-e2e-orders-{RUN}"
GROUP = f"deploy-e2e-billing-{RUN}"
# Dashboard variables and Grafana's interval macros, as Grafana would substitute them for this incident.
VARIABLES = {
    "$__rate_interval": "1m",
    "$__interval": "30s",
    "$__range": "5m",
    "$cluster": "sandbox",
    "$group": GROUP,
    "$topic": TOPIC,
}
# Panels and rules that stay empty for a healthy sandbox with one rewind (everything else must have data).
MAY_BE_EMPTY_PANELS = {"Under-replicated partitions per topic", "Stale collectors"}
RULES_WITH_DATA = {"OffsetguardOffsetRewind"}
RULES_WITHOUT_DATA = {"OffsetguardMessagesLost", "OffsetguardDown"}
TIMINGS: dict[str, float] = {}


def _substitute(expr: str) -> str:
    for name in sorted(VARIABLES, key=len, reverse=True):
        expr = expr.replace(name, VARIABLES[name])
    assert "$" not in expr, expr
    return expr


def _dashboard() -> dict[str, Any]:
    return dict(json.loads(DASHBOARD.read_text()))


def _panel_queries() -> list[tuple[str, str]]:
    return [
        (panel["title"], target["expr"])
        for panel in _dashboard()["panels"]
        for target in panel.get("targets", [])
    ]


def _rules() -> list[dict[str, Any]]:
    return [r for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"]]


@pytest.fixture(scope="module")
def served(kafka1: SandboxCluster) -> Iterator[Served]:
    """The wheel in a fresh venv, run as nobody with the image's entrypoint, ready on the sandbox."""
    base = world_readable_dir("offsetguard-deploy-")
    try:
        start = time.monotonic()
        build = base / "build"
        build.mkdir()
        wheel = build_wheel(build)
        venv = fresh_venv(base, wheel, export_requirements(requirements_export_code(), build))
        TIMINGS["wheel+venv"] = time.monotonic() - start
        config = {
            "clusters": [
                {
                    "name": "sandbox",
                    "bootstrap_servers": kafka1.bootstrap_servers,
                    "metrics_urls": kafka1.metrics_urls,
                }
            ],
            "intervals": {
                "metadata": 1,
                "offsets": 1,
                "groups": 1,
                "committed": 0.5,
                "configs": 30,
                "broker_metrics": 2,
            },
            "tail": {"start_from": "earliest", "checkpoint_seconds": 0.2},
            "detection": {"debounce_seconds": 0.1, "state_save_seconds": 1},
            # the default families, plus kafka_exporter's for the dashboard-7589 queries documented in
            # docs/grafana.md (the shipped dashboard and rules read offsetguard's own families only)
            "metrics": {"families": ["offsetguard", "kafka_exporter"]},
        }
        with serve_as_nobody(venv, base, yaml.safe_dump(config)) as running:
            TIMINGS["ready"] = wait_ready(running)
            yield running
    finally:
        subprocess.run(["rm", "-rf", str(base)], check=False)


@pytest.fixture(scope="module")
def incident(served: Served, kafka1: SandboxCluster) -> None:
    """GROUP commits 50 then 20 on TOPIC/0 (a 30-message rewind); the log then holds 70 (lag 50)."""
    admin = KafkaAdminClient(bootstrap_servers=kafka1.bootstrap_servers)
    producer = KafkaProducer(bootstrap_servers=kafka1.bootstrap_servers)
    try:
        ensure_topic(admin, TOPIC, 1)
        for i in range(60):
            producer.send(TOPIC, value=f"m{i}".encode(), partition=0)
        producer.flush()
        commit(admin, GROUP, {(TOPIC, 0): 50})
        time.sleep(3.0)  # the tail and the committed poll both see 50 first
        commit(admin, GROUP, {(TOPIC, 0): 20})
        for i in range(60, 70):
            producer.send(TOPIC, value=f"m{i}".encode(), partition=0)
        producer.flush()
    finally:
        producer.close()
        admin.close()


@pytest.fixture(scope="module")
def prometheus(
    served: Served, incident: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RulesPrometheus]:
    directory = tmp_path_factory.mktemp("deploy-prometheus")
    with prometheus_with_rules(directory, served.target, RULES) as prom:
        start = time.monotonic()
        prom.wait_value('up{job="offsetguard"} == 1')
        prom.wait_value('sum(offsetguard_alerts_firing{cluster="sandbox",kind="offset_rewind"}) > 0', 60)
        prom.wait_value(
            f'offsetguard_group_lag_messages{{group="{GROUP}",topic="{TOPIC}",partition="0"}} == 50', 60
        )
        time.sleep(3.0)  # a few more scrapes: rate() and increase() need two samples
        TIMINGS["incident visible"] = time.monotonic() - start
        yield prom


def test_smoke_wheel_entrypoint_as_nobody_ready_and_healthy(served: Served) -> None:
    status = Path(f"/proc/{served.pid}/status").read_text()
    uids = re.search(r"^Uid:\s+(\d+)\s+(\d+)", status, re.MULTILINE)
    assert uids and {int(uids.group(1)), int(uids.group(2))} == {NOBODY}
    cmdline = Path(f"/proc/{served.pid}/cmdline").read_bytes().split(b"\0")[1:-1]
    assert [a.decode() for a in cmdline[1:]][-4:] == ["--config", cmdline[-3].decode(), "--host", "0.0.0.0"]
    assert (served.data / "offsetguard.db").exists()  # the store is where the image's ENV puts it
    assert (served.data / "offsetguard.db").stat().st_uid == NOBODY
    check = image_healthcheck()
    check[0] = str(served.venv / "bin" / check[0])
    result = subprocess.run(
        check, env=served.env, user=NOBODY, group=NOBODY, extra_groups=[], capture_output=True, timeout=30
    )
    assert result.returncode == 0, result.stderr
    assert TIMINGS["ready"] < 180


def test_console_files_are_in_the_wheel(served: Served) -> None:
    for path, kind in (("/ui/", "text/html"), ("/ui/console.js", "text/javascript")):
        with urllib.request.urlopen(f"{served.base_url}{path}", timeout=10) as response:
            assert (response.status, response.headers["content-type"].split(";")[0]) == (200, kind)


def test_healthcheck_wrong_port_fails(served: Served) -> None:
    check = image_healthcheck()
    check[0] = str(served.venv / "bin" / check[0])
    env = {**served.env, "OFFSETGUARD_HTTP_PORT": "1"}
    result = subprocess.run(check, env=env, user=NOBODY, group=NOBODY, capture_output=True, timeout=30)
    assert result.returncode != 0


def test_prometheus_rules_all_evaluate_and_rewind_fires(prometheus: RulesPrometheus) -> None:
    deadline = time.monotonic() + 30
    while True:
        firing = [
            a
            for a in prometheus.alerts()
            if a["labels"]["alertname"] == "OffsetguardOffsetRewind" and a["state"] == "firing"
        ]
        if firing or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert [a["labels"]["cluster"] for a in firing] == ["sandbox"]
    assert firing[0]["annotations"]["runbook_url"].endswith("/docs/runbooks/offset_rewind.md")
    health = prometheus.rule_health()
    assert set(health) == {r["alert"] for r in _rules()}
    assert set(health.values()) == {"ok"}, health


def _ours(labels: dict[str, str]) -> bool:
    """A series of this test's incident, or a cluster-wide one (no group/topic label)."""
    return labels.get("group", GROUP) == GROUP and labels.get("topic", TOPIC) == TOPIC


@pytest.mark.parametrize("rule", _rules(), ids=lambda r: r["alert"])
def test_prometheus_rule_expression_runs_with_expected_data(
    prometheus: RulesPrometheus, rule: dict[str, Any]
) -> None:
    result = prometheus.query(rule["expr"])  # raises on a PromQL error
    if rule["alert"] in RULES_WITH_DATA:
        assert result, rule["alert"]
    if rule["alert"] in RULES_WITHOUT_DATA:
        # kafka1 is shared by the whole session: other tests' groups may legitimately be in such states
        # (e.g. golden workloads commit beyond the log end), so only this test's own series must be empty.
        ours = [r for r in result if _ours(r["metric"])]
        assert not ours, (rule["alert"], ours)


@pytest.mark.parametrize(("title", "expr"), _panel_queries(), ids=[t for t, _ in _panel_queries()])
def test_dashboard_panel_query_runs_with_incident_data(
    prometheus: RulesPrometheus, title: str, expr: str
) -> None:
    result = prometheus.query(_substitute(expr))
    if title not in MAY_BE_EMPTY_PANELS:
        assert result, f"{title}: {expr} returned nothing"


def test_dashboard_lag_panels_show_incident_lag(prometheus: RulesPrometheus) -> None:
    [lag] = [e for t, e in _panel_queries() if t.startswith("Lag per group and topic (messages)")]
    [series] = prometheus.query(_substitute(lag))
    assert (series["metric"]["group"], float(series["value"][1])) == (GROUP, 50.0)
    [seconds] = [e for t, e in _panel_queries() if t.startswith("Lag per group and topic (seconds")]
    [age] = prometheus.query(_substitute(seconds))
    assert 0 < float(age["value"][1]) < 600


def test_dashboard_annotation_marks_rewind_incident(prometheus: RulesPrometheus) -> None:
    [annotation] = [a for a in _dashboard()["annotations"]["list"] if a.get("name") == "Incidents"]
    result = prometheus.query(_substitute(annotation["expr"]))
    assert {(r["metric"]["cluster"], r["metric"]["kind"]) for r in result} >= {("sandbox", "offset_rewind")}


def test_dashboard_variables_list_incident_labels(prometheus: RulesPrometheus) -> None:
    wanted = {"cluster": "sandbox", "group": GROUP, "topic": TOPIC}
    for variable in _dashboard()["templating"]["list"]:
        if variable["type"] != "query":
            continue
        match = re.fullmatch(r"label_values\((.+), (\w+)\)", variable["query"]["query"])
        assert match, variable["query"]
        values = prometheus.label_values(match.group(2), _substitute(match.group(1)))
        assert wanted[variable["name"]] in values


def test_metric_families_referenced_all_exported(prometheus: RulesPrometheus) -> None:
    texts = [r["expr"] for r in _rules()] + [e for _, e in _panel_queries()]
    names = {n for text in texts for n in re.findall(r"\b((?:offsetguard|kafka)_[a-z_]+)\b", text)}
    missing = sorted(n for n in names if not prometheus.query(f'count({{__name__="{n}"}})'))
    assert not missing, missing
    print("stack timings (s):", {k: round(v, 1) for k, v in TIMINGS.items()})


def test_shipped_dashboard_and_rules_read_only_default_families() -> None:
    texts = [r["expr"] for r in _rules()] + [e for _, e in _panel_queries()]
    names = {n for text in texts for n in re.findall(r"\b((?:offsetguard|kafka)_[a-z_]+)\b", text)}
    assert names and not [n for n in names if not n.startswith("offsetguard_")]
    assert load_settings().metrics.families == ["offsetguard"]


def _dashboard_7589_queries() -> list[str]:
    text = (ROOT / "docs" / "grafana.md").read_text()
    section = text.split("## Dashboard 7589", 1)[1]
    block = section.split("```promql\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def test_dashboard_7589_documented_queries_return_incident_data(
    prometheus: RulesPrometheus, served: Served
) -> None:
    queries = _dashboard_7589_queries()
    assert len(queries) >= 5
    for query in queries:
        expr = query.replace("$instance", served.target).replace("$topic", TOPIC)
        assert prometheus.query(expr), query


def test_smoke_rewind_snapshot_written_as_nobody(served: Served, prometheus: RulesPrometheus) -> None:
    snapshots = Path(served.env["OFFSETGUARD_SNAPSHOTS__DIRECTORY"])
    deadline = time.monotonic() + 60
    while not (snapshots.exists() and any(snapshots.iterdir())) and time.monotonic() < deadline:
        time.sleep(0.5)
    written = list(snapshots.iterdir()) if snapshots.exists() else []
    assert written, f"no __consumer_offsets snapshot under {snapshots}"
    assert {p.stat().st_uid for p in written} == {NOBODY}
