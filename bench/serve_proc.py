"""A separate ``offsetguard serve`` process as users run it (default settings but for the cluster, the store
and the port), for the benchmarks that watch what it reports."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

from bench.service_run import free_port, terminate
from sandbox.cluster import SandboxCluster


class Serve:
    """``offsetguard serve`` with default settings but for the cluster, the store and the port."""

    def __init__(
        self, cluster: SandboxCluster, name: str, workdir: Path, extra: dict[str, Any] | None = None
    ) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.name, self.port = name, free_port()
        config = {
            "clusters": [cluster.cluster_config(name)],
            "store": {"path": str(workdir / "offsetguard.db")},
            **(extra or {}),  # sections a benchmark must change, said in its docstring
        }
        (workdir / "offsetguard.yaml").write_text(yaml.safe_dump(config))
        cli = Path(sys.executable).with_name("offsetguard")
        self.log = (workdir / "serve.log").open("wb")
        self.proc = subprocess.Popen(
            [str(cli), "serve", "--config", str(workdir / "offsetguard.yaml"), "--port", str(self.port)],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=30)

    def ready(self) -> bool:
        if self.proc.poll() is not None:
            raise RuntimeError(f"offsetguard serve exited with {self.proc.returncode}")
        try:
            return self.http.get("/readyz").status_code == 200
        except httpx.TransportError:
            return False

    def alerts(self) -> list[dict[str, Any]]:
        """Every alert of the cluster, newest first (page after page)."""
        out: list[dict[str, Any]] = []
        params: dict[str, Any] = {"cluster": self.name, "limit": 1000}
        while True:
            r = self.http.get("/api/v1/alerts", params=params)
            r.raise_for_status()
            page = r.json()
            out.extend(page["alerts"])
            if not page.get("next_cursor"):
                return out
            params["cursor"] = page["next_cursor"]

    def partitions(self, topic: str) -> list[dict[str, Any]]:
        """The topic's partitions as the service last saw them (log range, leader, ISR)."""
        r = self.http.get(f"/api/v1/clusters/{self.name}/topics/{topic}/partitions")
        if r.status_code == 404:
            return []
        r.raise_for_status()
        return list(r.json()["partitions"])

    def committed(self, group: str, topic: str, partition: int) -> int | None:
        """The group's committed offset as the service last saw it (None: not seen)."""
        r = self.http.get(f"/api/v1/clusters/{self.name}/groups/{group}")
        if r.status_code == 404:
            return None
        r.raise_for_status()
        found = (
            p["committed_offset"]
            for p in r.json()["partitions"]
            if (p["topic"], p["partition"]) == (topic, partition)
        )
        return next(found, None)

    def stop(self) -> None:
        self.http.close()
        terminate(self.proc)
        self.log.close()


def until(check: Any, timeout: float, what: str) -> float:
    """Seconds until ``check()`` is true; raises after ``timeout``."""
    t0 = time.monotonic()
    while not check():
        if time.monotonic() - t0 > timeout:
            raise RuntimeError(f"{what}: not reached in {timeout:.0f} s")
        time.sleep(0.25)
    return time.monotonic() - t0
