"""A real Alertmanager (Debian's ``prometheus-alertmanager``) run by the tests: own config, storage and
port, clustering off; stopped after. :func:`ensure_alertmanager` installs the package with
``deploy/tools/install-alertmanager.sh`` when the binary is not on PATH.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.service.metrics.integration.prometheus import die_with_parent
from tests.service.metrics.serving import free_port

ROOT = Path(__file__).resolve().parents[4]
INSTALL = ROOT / "deploy" / "tools" / "install-alertmanager.sh"
BINARY = Path("/usr/bin/prometheus-alertmanager")


def ensure_alertmanager() -> str:
    """Path of the ``prometheus-alertmanager`` binary, installing Debian's package first if missing."""
    found = shutil.which("prometheus-alertmanager")
    if found is None:
        subprocess.run(["bash", str(INSTALL)], check=True, timeout=900)
        assert BINARY.exists(), f"{BINARY} missing after {INSTALL}"
        found = str(BINARY)
    return found


class Alertmanager:
    def __init__(self, base: str) -> None:
        self.base = base

    def alerts(self) -> list[dict[str, Any]]:
        """``GET /api/v2/alerts``: the alerts Alertmanager holds and has not seen resolve."""
        with urllib.request.urlopen(f"{self.base}/api/v2/alerts", timeout=5) as response:
            return list(json.load(response))


@contextmanager
def running_alertmanager(binary: str, directory: Path) -> Iterator[Alertmanager]:
    """Alertmanager with a route to a receiver that sends nothing, until the block ends."""
    config = directory / "alertmanager.yml"
    config.write_text(
        json.dumps(  # JSON is YAML
            {
                "global": {"resolve_timeout": "5m"},
                "route": {"receiver": "blackhole", "group_wait": "1s", "group_interval": "1s"},
                "receivers": [{"name": "blackhole"}],
            }
        )
    )
    port = free_port()
    log_path = directory / "alertmanager.log"
    log = log_path.open("ab")
    proc = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--storage.path={directory / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--cluster.listen-address=",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=die_with_parent(),
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, f"alertmanager exited: {log_path.read_text()[-2000:]}"
            try:
                with urllib.request.urlopen(f"{base}/-/ready", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield Alertmanager(base)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()
