"""The chart's store retention values: history and resolved alerts, rendered into settings that load."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from service.settings import load_settings
from tests.deploy.tools import CHART, by_kind, helm, helm_template, run


def test_configmap_defaults_store_retention_loaded(tmp_path: Path) -> None:
    configmap = next(d for d in by_kind(helm_template(), "ConfigMap") if "offsetguard.yaml" in d["data"])
    (tmp_path / "offsetguard.yaml").write_text(configmap["data"]["offsetguard.yaml"])
    store = load_settings(tmp_path / "offsetguard.yaml").store
    assert (store.retention_days, store.alerts_retention_days) == (14, 90)
    assert yaml.safe_load(configmap["data"]["offsetguard.yaml"])["store"]["alerts_retention_days"] == 90


@pytest.mark.parametrize("value", ["config.store.alerts_retention_days=0.5", "config.store.retention_days=0"])
def test_helm_template_bad_store_retention_fails_naming_it(value: str) -> None:
    result = run([helm(), "template", "offsetguard", str(CHART), "--set", value])
    assert result.returncode != 0
    assert f"/config/store/{value.split('.')[2].split('=')[0]}" in result.stderr
