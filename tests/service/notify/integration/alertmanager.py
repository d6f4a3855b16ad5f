"""A real Alertmanager (Debian's ``prometheus-alertmanager``) run by the tests: own config, storage and
port, clustering off; stopped after. :func:`ensure_alertmanager` installs the package with
``deploy/tools/install-alertmanager.sh`` when the binary is not on PATH.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.daemons import ensure_binary, running_daemon


def ensure_alertmanager() -> str:
    """Path of the ``prometheus-alertmanager`` binary, installing Debian's package first if missing."""
    return ensure_binary("prometheus-alertmanager", "install-alertmanager.sh")


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

    def argv(port: int) -> list[str]:
        return [
            binary,
            f"--config.file={config}",
            f"--storage.path={directory / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--cluster.listen-address=",
        ]

    with running_daemon(argv, directory / "alertmanager.log", poll=0.2) as base:
        yield Alertmanager(base)
