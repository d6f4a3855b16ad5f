"""A real Prometheus (Debian's package) run by the tests: own config, storage and port; stopped after.

:func:`ensure_prometheus` installs the package with ``deploy/tools/install-prometheus.sh`` when
``prometheus`` is not on PATH. The package may also try to start its own service; that one is never
used (nor stopped) here.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from tests.support.daemons import die_with_parent, ensure_binary, running_daemon

__all__ = ["Prometheus", "die_with_parent", "ensure_prometheus", "running_prometheus"]


def ensure_prometheus() -> str:
    """Path of the ``prometheus`` binary, installing Debian's package first if it is missing."""
    return ensure_binary("prometheus", "install-prometheus.sh")


class Prometheus:
    """Handle on a running Prometheus: its base URL and an instant-query helper."""

    def __init__(self, base: str) -> None:
        self.base = base

    def query(self, promql: str) -> list[dict[str, Any]]:
        """``/api/v1/query`` result vector (raises on a non-success status)."""
        url = f"{self.base}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(url, timeout=5) as response:
            body = json.load(response)
        assert body["status"] == "success", body
        return list(body["data"]["result"])

    def wait_value(self, promql: str, timeout: float = 60.0) -> float:
        """The single sample's value, once the query has exactly one result."""
        deadline = time.monotonic() + timeout
        last: object = None
        while time.monotonic() < deadline:
            try:
                result = self.query(promql)
                if len(result) == 1:
                    return float(result[0]["value"][1])
                last = result
            except (OSError, urllib.error.URLError) as exc:
                last = exc
            time.sleep(0.5)
        raise AssertionError(f"{promql} never had one result in {timeout} s: {last}")


P = TypeVar("P", bound=Prometheus)


@contextmanager
def running_prometheus(
    binary: str,
    directory: Path,
    target: str,
    *,
    job: str = "offsetguard",
    labels: Mapping[str, str] | None = None,
    more_jobs: Mapping[str, Sequence[str]] | None = None,
    rules: Path | None = None,
    handle: type[P] = Prometheus,  # type: ignore[assignment]
) -> Iterator[P]:
    """Prometheus scraping ``target`` (host:port) every second, evaluating ``rules`` if given, until the
    block ends. ``more_jobs`` (job name -> host:port targets) are scraped too; ``labels`` are added to
    every target (as a Kubernetes relabelling would add its namespace)."""
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "prometheus.yml"
    jobs = {job: [target], **(more_jobs or {})}
    settings: dict[str, Any] = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
        "scrape_configs": [
            {"job_name": name, "static_configs": [{"targets": list(targets), "labels": dict(labels or {})}]}
            for name, targets in jobs.items()
        ],
    }
    if rules is not None:
        settings["rule_files"] = [str(rules)]
    config.write_text(json.dumps(settings))  # JSON is YAML

    def argv(port: int) -> list[str]:
        return [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={directory / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ]

    with running_daemon(argv, directory / "prometheus.log") as base:
        yield handle(base)
