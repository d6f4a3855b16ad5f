"""bench/ha's moving parts: a replica (``offsetguard serve`` in its own directory), Prometheus scraping the
replicas, and the bench's own session on the store's database."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import psycopg
import yaml

from bench import proctree
from bench.ha_figures import leader_gauges, role_of
from bench.service_run import free_port
from sandbox.cluster import SandboxCluster
from tests.support.daemons import die_with_parent

SCRAPE_S, PROBE_S = 15.0, 10.0  # Prometheus's scrape interval; a kubelet's readiness probe period


class Replica:
    """One ``offsetguard serve`` in its own directory (its cwd: the default relative paths land there)."""

    def __init__(self, name: str, cluster: SandboxCluster, store_env: dict[str, str], root: Path) -> None:
        self.name, self.port, self.dir = name, free_port(), root / f"replica-{name}"
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "offsetguard.yaml").write_text(
            yaml.safe_dump({"clusters": [cluster.cluster_config("bench")]})
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("OFFSETGUARD_")}
        self.env = env | store_env | {"OFFSETGUARD_HA__REPLICA_ID": name}
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=5.0)
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        cli = Path(sys.executable).with_name("offsetguard")
        self.starts += 1
        with (self.dir / "serve.log").open("ab") as log:
            self.proc = subprocess.Popen(
                [str(cli), "serve", "--config", "offsetguard.yaml", "--port", str(self.port)],
                cwd=self.dir, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                preexec_fn=die_with_parent(),
            )  # fmt: skip

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def get(self, path: str) -> tuple[int, Any]:
        try:
            r = self.http.get(path)
        except httpx.TransportError:
            return 0, None
        return r.status_code, (r.json() if path == "/readyz" else r.text)

    def role(self) -> str | None:
        return role_of(*self.get("/readyz"))

    def kill(self) -> None:
        """SIGKILL the whole tree at once (a pod or its node lost), then reap it."""
        for pid in proctree.descendants(self.pid):
            with contextlib.suppress(ProcessLookupError):  # gone already
                os.kill(pid, signal.SIGKILL)
        assert self.proc is not None
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.kill()
        self.http.close()


class Prometheus:
    """Scrapes each replica's ``/metrics`` every 15 s and probes ``/readyz`` every 10 s in a thread; keeps
    each scrape's leader gauges and any tick at which two replicas both export ``offsetguard_leader 1``."""

    def __init__(self, replicas: Sequence[Replica]) -> None:
        self.replicas = replicas
        self.scrapes = 0
        self.failed = 0
        self.both_leader_ticks: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="prometheus")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def figures(self) -> dict[str, Any]:
        # failed: scrapes of a replica while it was down (killed, starting again) included
        return {"scrapes": self.scrapes, "failed": self.failed, "both_leader_ticks": self.both_leader_ticks}

    def _run(self) -> None:
        next_scrape = next_probe = time.monotonic()
        while not self._stop.is_set():
            now = time.monotonic()
            if now >= next_probe:
                for r in self.replicas:
                    r.get("/readyz")
                next_probe += PROBE_S
            if now >= next_scrape:
                leaders = []
                for r in self.replicas:
                    status, text = r.get("/metrics")
                    self.scrapes += 1
                    if status != 200:
                        self.failed += 1
                        continue
                    if leader_gauges(text)["leader"].get(r.name) == 1.0:
                        leaders.append(r.name)
                if len(leaders) > 1:
                    self.both_leader_ticks.append({"at": time.strftime("%H:%M:%S"), "leaders": leaders})
                next_scrape += SCRAPE_S
            self._stop.wait(max(0.0, min(next_scrape, next_probe) - time.monotonic()))


class Database:
    """The bench's own session on the store's database: its counters, and the lease row's time left."""

    def __init__(self, url: str) -> None:
        self.name = url.rsplit("/", 1)[1]
        self.conn = psycopg.connect(url, autocommit=True, connect_timeout=10)

    def counters(self) -> dict[str, float]:
        db = self.conn.execute(
            "SELECT xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted"
            " FROM pg_stat_database WHERE datname = %s",
            (self.name,),
        ).fetchone()
        lease = self.conn.execute(
            "SELECT n_tup_upd, coalesce(idx_scan, 0) + coalesce(seq_scan, 0)"
            " FROM pg_stat_user_tables WHERE relname = 'leader_lease'"
        ).fetchone()
        assert db is not None and lease is not None, "no stats for the store's database or leader_lease"
        keys = ("xact_commit", "xact_rollback", "tup_inserted", "tup_updated", "tup_deleted")
        return dict(zip(keys, map(float, db), strict=True)) | {
            "lease_row_updates": float(lease[0]),
            "lease_table_scans": float(lease[1]),
        }

    def lease(self) -> dict[str, Any]:
        row = self.conn.execute(
            "SELECT holder, epoch, expires_at - EXTRACT(EPOCH FROM clock_timestamp())::double precision,"
            " EXTRACT(EPOCH FROM clock_timestamp())::double precision - renewed_at FROM leader_lease"
        ).fetchone()
        assert row is not None, "no leader_lease row"
        return {
            "holder": row[0],
            "epoch": row[1],
            "left_s": round(row[2], 2),
            "since_renewal_s": round(row[3], 2),
        }
