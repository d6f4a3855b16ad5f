"""A real Prometheus (Debian's package) that scrapes one target every second and evaluates a rules file.

Builds on the metrics integration helpers (install, parent-death signal, the query handle); adds the
rules, the alerts API and label values the dashboard's variables use.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.service.metrics.integration.prometheus import Prometheus, die_with_parent, ensure_prometheus
from tests.service.metrics.serving import free_port


class RulesPrometheus(Prometheus):
    """:class:`Prometheus` plus the endpoints a rules/dashboard check needs."""

    def get(self, path: str, **params: str) -> Any:
        url = f"{self.base}{path}?" + urllib.parse.urlencode(params)
        with urllib.request.urlopen(url, timeout=5) as response:
            body = json.load(response)
        assert body["status"] == "success", body
        return body["data"]

    def alerts(self) -> list[dict[str, Any]]:
        return list(self.get("/api/v1/alerts")["alerts"])

    def rule_health(self) -> dict[str, str]:
        """Rule name -> ``ok`` / ``err`` / ``unknown`` as Prometheus last evaluated it."""
        groups = self.get("/api/v1/rules")["groups"]
        return {r["name"]: r["health"] for g in groups for r in g["rules"]}

    def label_values(self, label: str, match: str) -> list[str]:
        return list(self.get(f"/api/v1/label/{label}/values", **{"match[]": match}))


@contextmanager
def prometheus_with_rules(directory: Path, target: str, rules: Path) -> Iterator[RulesPrometheus]:
    """Prometheus scraping ``target`` (host:port) and evaluating ``rules``, both every second."""
    binary = ensure_prometheus()
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "prometheus.yml"
    config.write_text(
        json.dumps(  # JSON is YAML
            {
                "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
                "rule_files": [str(rules)],
                "scrape_configs": [{"job_name": "offsetguard", "static_configs": [{"targets": [target]}]}],
            }
        )
    )
    port = free_port()
    log_path = directory / "prometheus.log"
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={directory / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent(),
        )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, f"prometheus exited: {log_path.read_text()[-2000:]}"
            try:
                with urllib.request.urlopen(f"{base}/-/ready", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        yield RulesPrometheus(base)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
