"""A real Prometheus (Debian's package) run by the tests: own config, storage and port; stopped after.

:func:`ensure_prometheus` installs the package with ``deploy/tools/install-prometheus.sh`` when
``prometheus`` is not on PATH. The package may also try to start its own service; that one is never
used (nor stopped) here.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.service.metrics.serving import free_port

ROOT = Path(__file__).resolve().parents[4]
INSTALL = ROOT / "deploy" / "tools" / "install-prometheus.sh"
BINARY = Path("/usr/bin/prometheus")
PR_SET_PDEATHSIG = 1


def ensure_prometheus() -> str:
    """Path of the ``prometheus`` binary, installing Debian's package first if it is missing."""
    found = shutil.which("prometheus")
    if found is None:
        subprocess.run(["bash", str(INSTALL)], check=True, timeout=900)
        assert BINARY.exists(), f"{BINARY} missing after {INSTALL}"
        found = str(BINARY)
    return found


def die_with_parent() -> Callable[[], None]:
    parent = os.getpid()

    def preexec() -> None:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)

    return preexec


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


@contextmanager
def running_prometheus(
    binary: str, directory: Path, target: str, *, job: str = "offsetguard"
) -> Iterator[Prometheus]:
    """Prometheus scraping ``target`` (host:port) every second until the block ends."""
    config = directory / "prometheus.yml"
    config.write_text(
        json.dumps(  # JSON is YAML
            {
                "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
                "scrape_configs": [{"job_name": job, "static_configs": [{"targets": [target]}]}],
            }
        )
    )
    port = free_port()
    log = (directory / "prometheus.log").open("ab")
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
            assert proc.poll() is None, (
                f"prometheus exited: {(directory / 'prometheus.log').read_text()[-2000:]}"
            )
            try:
                with urllib.request.urlopen(f"{base}/-/ready", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        yield Prometheus(base)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()
