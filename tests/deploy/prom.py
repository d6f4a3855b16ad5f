"""A real Prometheus (Debian's package) that scrapes one target every second and evaluates a rules file.

Builds on the metrics integration helpers (install, parent-death signal, the query handle); adds the
rules, the alerts API and label values the dashboard's variables use.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.service.metrics.integration.prometheus import Prometheus, ensure_prometheus, running_prometheus


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
    with running_prometheus(
        ensure_prometheus(), directory, target, rules=rules, handle=RulesPrometheus
    ) as prometheus:
        yield prometheus
