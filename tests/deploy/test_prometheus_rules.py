"""The Prometheus rules file: promtool accepts it, its unit tests pass, every rule is tested firing and not
firing, and every rule carries severity, summary, description and a runbook that exists."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from alerts import model
from tests.deploy.tools import RULE_TESTS, RULES, RUNBOOK_BASE, RUNBOOKS, promtool, run

ALERT_KINDS = sorted(v for k, v in vars(model).items() if k.isupper() and isinstance(v, str))
RULE_LIST: list[dict[str, Any]] = [r for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"]]
RULE_NAMES = [r["alert"] for r in RULE_LIST]


def _unit_cases() -> list[dict[str, Any]]:
    cases = []
    for path in sorted(RULE_TESTS.glob("*.yaml")):
        for test in yaml.safe_load(path.read_text())["tests"]:
            cases.extend(test.get("alert_rule_test", []))
    return cases


def test_promtool_check_rules_file_succeeds() -> None:
    result = run([promtool(), "check", "rules", str(RULES)])
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(RULE_LIST)} rules found" in result.stdout


def test_promtool_unit_tests_all_files_pass() -> None:
    files = sorted(str(p) for p in RULE_TESTS.glob("*.yaml"))
    assert files
    result = run([promtool(), "test", "rules", *files])
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("SUCCESS") == len(files)


def test_promtool_unit_tests_broken_rule_fail(tmp_path: Path) -> None:
    broken = RULES.read_text().replace(
        'kind="offset_rewind",severity="critical"}) > 0', 'kind="offset_rewind",severity="critical"}) > 2', 1
    )
    assert broken != RULES.read_text()
    (tmp_path / "offsetguard-rules.yaml").write_text(broken)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "incidents.yaml").write_text((RULE_TESTS / "incidents.yaml").read_text())
    result = run([promtool(), "test", "rules", str(tmp_path / "tests" / "incidents.yaml")])
    assert result.returncode != 0
    assert "OffsetguardOffsetRewind" in result.stdout + result.stderr


@pytest.mark.parametrize("name", RULE_NAMES)
def test_rule_unit_tests_rule_fires_and_stays_silent(name: str) -> None:
    cases = [c for c in _unit_cases() if c["alertname"] == name]
    assert any(c["exp_alerts"] for c in cases), f"{name} has no firing unit test"
    assert any(not c["exp_alerts"] for c in cases), f"{name} has no not-firing unit test"


@pytest.mark.parametrize("rule", RULE_LIST, ids=RULE_NAMES)
def test_rule_metadata_complete_with_runbook(rule: dict[str, Any]) -> None:
    assert rule["alert"].startswith("Offsetguard")
    assert rule["labels"]["severity"] in {"critical", "warning", "info"}
    assert {"summary", "description", "runbook_url"} <= set(rule["annotations"])
    assert re.search(r"offsetguard_[a-z_]+", rule["expr"]), "rules watch offsetguard's own families"
    url = rule["annotations"]["runbook_url"]
    assert url.startswith(RUNBOOK_BASE) and url.endswith(".md")
    page = url[len(RUNBOOK_BASE) :]
    if page == "{{ $labels.kind }}.md":  # the catch-all rules: every kind has its page
        targets = [RUNBOOKS / f"{kind}.md" for kind in ALERT_KINDS]
    else:
        targets = [RUNBOOKS / page]
    for target in targets:
        assert target.exists(), f"{target} missing"


@pytest.mark.parametrize("kind", ALERT_KINDS)
def test_runbook_alert_kind_has_page_with_sections(kind: str) -> None:
    text = (RUNBOOKS / f"{kind}.md").read_text()
    assert text.startswith(f"# {kind}")
    for heading in ("## What it means", "## Confirm", "## Restore", "## When it is benign"):
        assert heading in text, f"{kind}.md lacks {heading!r}"
    assert f"/api/v1/alerts?kind={kind}" in text


def test_runbook_group_kinds_show_reset_plan_restore() -> None:
    group_kinds = [
        model.OFFSET_REWIND,
        model.OFFSET_SKIP,
        model.COMMITTED_BELOW_LOG_START,
        model.COMMITTED_BEYOND_LOG_END,
        model.LOG_TRUNCATION,
        model.UNCLEAN_LEADER_ELECTION,
        model.OFFSETS_LOST,
        model.EPOCH_DIVERGENCE,
    ]
    for kind in group_kinds:
        text = (RUNBOOKS / f"{kind}.md").read_text()
        assert "/reset-plan?time=" in text, kind
        assert "kafka-consumer-groups" in text and "--from-file plan.csv" in text and "--execute" in text, (
            kind
        )
