"""One incident, one page: with offsetguard pushing to Alertmanager (a notify receiver of type alertmanager)
the chart's PrometheusRule keeps only offsetguard-health (offsetguard watching itself), not the incident
and lag rules on the alerts it already pushes, which would page every incident twice."""

from __future__ import annotations

import json

import pytest

from tests.deploy.tools import CHART, by_kind, documents, helm, run

CLUSTER = '--set-json=clusters=[{"name":"prod","bootstrap_servers":["kafka:9092"]}]'
PUSH = "--set-json=config.notify=" + json.dumps(
    {"receivers": [{"name": "am", "type": "alertmanager", "url": "http://alertmanager:9093"}]}
)
HOOK = "--set-json=config.notify=" + json.dumps(
    {"receivers": [{"name": "hook", "type": "webhook", "url": "http://hooks:8080/x"}]}
)
RULE = "--set=prometheusRule.enabled=true"
EVERY = ["offsetguard-incidents", "offsetguard-lag", "offsetguard-health"]


@pytest.mark.parametrize(
    ("values", "groups"),
    [((RULE,), EVERY), ((HOOK, RULE), EVERY), ((PUSH, RULE), ["offsetguard-health"]), ((PUSH,), None)],
    ids=["rule", "webhook-and-rule", "push-and-rule", "push-only"],
)
def test_rule_groups_rendered_beside_an_alertmanager_push(
    values: tuple[str, ...], groups: list[str] | None
) -> None:
    result = run([helm(), "template", "offsetguard", str(CHART), CLUSTER, *values])
    assert result.returncode == 0, result.stderr
    rules = by_kind(documents(result.stdout), "PrometheusRule")
    if groups is None:
        assert rules == []
    else:
        [rule] = rules
        assert [g["name"] for g in rule["spec"]["groups"]] == groups
        assert all(g["rules"] for g in rule["spec"]["groups"])
