"""One measured run of a metrics server (offsetguard serve, or a peer) as Prometheus sees it."""

from __future__ import annotations

import argparse
import collections
import contextlib
import gzip
import json
import os
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

from bench import proctree
from bench.service_traffic import Churn
from sandbox.cluster import SandboxCluster
from service.metrics.endpoint import PROMETHEUS_HEADERS

START_TIMEOUT_S = 600.0
# Until ``/metrics`` is complete it is scraped again this long after each answer: the time to a complete
# picture is measured to this step (plus the scrape's own time, as kminion's). kminion's is exact (its
# first answer waits for its collection), so at 0.5 s offsetguard's came out up to 0.5 s late against it
# (20k: 2.99 s where a 0.1 s step saw 2.3-2.5 s).
START_POLL_S = 0.1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def terminate(proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    """SIGTERM (a clean stop: the service saves its state), SIGKILL if it has not exited in ``timeout``."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def family_bytes(body: bytes) -> dict[str, int]:
    """Bytes of the exposition per family set (offsetguard_, kafka_consumergroup_group_ = kafka-lag-
    exporter, other kafka_ = kafka_exporter, kminion_, the rest)."""
    sizes: collections.Counter[str] = collections.Counter()
    for line in body.splitlines(keepends=True):
        name = line.split(b" ", 3)[2] if line.startswith(b"# ") and line.count(b" ") >= 2 else line
        if name.startswith(b"offsetguard_"):
            key = "offsetguard"
        elif name.startswith(b"kafka_consumergroup_group_"):
            key = "kafka_lag_exporter"
        elif name.startswith(b"kafka_"):
            key = "kafka_exporter"
        elif name.startswith(b"kminion_"):
            key = "kminion"
        else:
            key = "other"
        sizes[key] += len(line)
    return dict(sizes)


@dataclass
class ServiceRun:
    """Start ``command``, measure its time to ready and to a complete exposition, then steady state, stop."""

    label: str
    command: list[str]
    env: dict[str, str]
    port: int
    workdir: Path
    ready_path: str | None  # None: ready when /metrics answers
    complete: Callable[[bytes], bool]
    args: argparse.Namespace
    profile_s: float = 0.0
    cwd: Path | None = None
    scrapes: list[float] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def run(self, churn: Churn | None) -> dict[str, Any]:
        self.workdir.mkdir(parents=True, exist_ok=True)
        log = (self.workdir / f"{self.label}.log").open("wb")
        t0 = time.monotonic()
        proc = subprocess.Popen(
            self.command, env=self.env, stdout=log, stderr=subprocess.STDOUT, cwd=self.cwd
        )
        rss = proctree.RssPeak(proc.pid)
        out: dict[str, Any] = {"label": self.label}
        try:
            with httpx.Client(timeout=300.0) as client:
                out |= self._wait_start(client, proc, t0)
                if churn is not None:
                    churn.start()
                self._scrapes(client, proc, self.args.settle)  # scraped from the start, as by Prometheus
                # What the start cost, standing renders of the first minutes included (reported apart:
                # steady state begins after them)
                out["start_cpu_s"] = round(proctree.cpu_seconds(proc.pid), 2)
                out["start_window_s"] = round(time.monotonic() - t0, 1)
                # The profile samples the first profile_s seconds of steady state, scrapes included (the
                # metrics worker only works while scraped).
                profiled: dict[str, Any] = {}
                profiler = threading.Thread(target=self._profile, args=(proc.pid, profiled), daemon=True)
                if self.profile_s > 0:
                    profiler.start()
                out |= self._steady(client, proc, self.args.steady)
                if self.profile_s > 0:
                    profiler.join()
                    out |= profiled
        finally:
            if churn is not None:
                churn.stop()
            terminate(proc)
            out["peak_rss_mb"] = round(rss.stop() / 1e6, 1)
            log.close()
        print(f"[{self.label}] {json.dumps({k: v for k, v in out.items() if k != 'profile'})}", flush=True)
        return out

    def _profile(self, pid: int, into: dict[str, Any]) -> None:
        prof = proctree.profile(pid, self.profile_s, self.workdir / f"{self.label}-profile.txt")
        if prof is not None:
            into["profile"] = prof

    def _scrape(self, client: httpx.Client) -> tuple[float, httpx.Response]:
        t = time.perf_counter()
        headers = {"Accept": PROMETHEUS_HEADERS[0], "Accept-Encoding": "gzip"}
        r = client.get(f"{self.url}/metrics", headers=headers)
        return time.perf_counter() - t, r

    def _alive(self, proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is not None:
            raise RuntimeError(f"{self.label} exited with {proc.returncode}: see {self.workdir}")

    def _wait_start(self, client: httpx.Client, proc: subprocess.Popen[bytes], t0: float) -> dict[str, Any]:
        """Seconds from start to ready and to a complete ``/metrics``, each measured from the start: the
        ready path is polled on its own thread every 0.2 s while ``/metrics`` is scraped again
        :data:`START_POLL_S` after each answer (as Prometheus would, it does not wait for readiness).
        Without a ready path, ready is the first ``/metrics`` answer."""
        ready: list[float] = []
        if self.ready_path is not None:
            poller = threading.Thread(target=self._poll_ready, args=(t0, ready), daemon=True)
            poller.start()
        first: float | None = None
        while time.monotonic() - t0 < START_TIMEOUT_S:
            self._alive(proc)
            try:
                took, r = self._scrape(client)
            except httpx.TransportError:
                time.sleep(0.2)
                continue
            if r.status_code == 200:
                if self.ready_path is None and not ready:
                    ready.append(time.monotonic() - t0)
                first = took if first is None else first
                if self.complete(r.content):
                    complete = time.monotonic() - t0
                    if self.ready_path is not None:
                        poller.join(max(0.0, START_TIMEOUT_S - (time.monotonic() - t0)))
                    if not ready:
                        break
                    return {
                        "ready_s": round(ready[0], 2),
                        "complete_s": round(complete, 2),
                        "first_scrape_s": round(first, 3),
                        "complete_scrape_s": round(took, 3),
                    }
            time.sleep(START_POLL_S)
        raise RuntimeError(f"{self.label}: not ready with a complete /metrics in {START_TIMEOUT_S} s")

    def _poll_ready(self, t0: float, into: list[float]) -> None:
        with httpx.Client(timeout=30.0) as client:
            while time.monotonic() - t0 < START_TIMEOUT_S:
                try:
                    if client.get(f"{self.url}{self.ready_path}").status_code == 200:
                        into.append(time.monotonic() - t0)
                        return
                except httpx.TransportError:
                    pass
                time.sleep(0.2)

    def _scrapes(
        self, client: httpx.Client, proc: subprocess.Popen[bytes], seconds: float
    ) -> tuple[list[float], bytes, int]:
        """Scrape every ``--scrape-interval`` for ``seconds``: each scrape's latency, the last body and its
        bytes on the wire."""
        t0 = time.monotonic()
        latencies: list[float] = []
        body = b""
        wire = 0
        while time.monotonic() - t0 < seconds:
            self._alive(proc)
            took, r = self._scrape(client)
            latencies.append(took)
            body, wire = r.content, r.num_bytes_downloaded
            time.sleep(max(0.0, self.args.scrape_interval - took))  # whole intervals: the rhythm holds
        return latencies, body, wire

    def _steady(self, client: httpx.Client, proc: subprocess.Popen[bytes], seconds: float) -> dict[str, Any]:
        cpu0, t0 = proctree.cpu_seconds(proc.pid), time.monotonic()
        threads0 = proctree.thread_cpu(proc.pid)
        latencies, body, wire = self._scrapes(client, proc, seconds)
        # the last body, beside the service's log (which series a run had: compare two runs' with zgrep)
        (self.workdir / f"{self.label}-last-scrape.txt.gz").write_bytes(gzip.compress(body, 1))
        cpu = proctree.cpu_seconds(proc.pid) - cpu0
        elapsed = time.monotonic() - t0
        threads = proctree.thread_cpu(proc.pid)
        latencies.sort()
        return {
            "steady_s": round(elapsed, 1),
            "cpu_s_per_min": round(cpu * 60.0 / elapsed, 2),
            # the service process's threads by kind (not its render worker, when one runs apart)
            "cpu_s_per_min_by_thread": proctree.thread_kinds(proc.pid, threads0, threads, elapsed / 60.0),
            "scrapes": len(latencies),
            "scrape_p50_s": round(statistics.median(latencies), 3),
            "scrape_p99_s": round(latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))], 3),
            "scrape_max_s": round(latencies[-1], 3),
            "body_bytes": len(body),
            "body_wire_bytes_gzip": wire,
            "body_bytes_by_family_set": family_bytes(body),
        }


def _lag_series_at_least(prefix: bytes, want: int) -> Callable[[bytes], bool]:
    return lambda body: body.count(b"\n" + prefix) >= want


def copy_store(source: Path, into: Path) -> None:
    """``source`` (an ``offsetguard.db``) and its write-ahead log, which holds what was not checkpointed
    yet, as ``into/offsetguard.db``."""
    into.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal"):
        if Path(f"{source}{suffix}").exists():
            shutil.copy(f"{source}{suffix}", into / f"offsetguard.db{suffix}")


def firing_alerts(store: Path) -> int:
    """Alerts firing in ``store/offsetguard.db`` (after the service stopped)."""
    with contextlib.closing(sqlite3.connect(store / "offsetguard.db")) as db:
        [(firing,)] = db.execute("SELECT count(*) FROM alerts WHERE status = 'firing'").fetchall()
    return int(firing)


def offsetguard_run(
    cluster: SandboxCluster,
    store: Path,
    expected: dict[str, int],
    args: argparse.Namespace,
    *,
    profile_s: float,
    label: str,
    tree: Path | None = None,
    cluster_extra: dict[str, Any] | None = None,
) -> ServiceRun:
    """``offsetguard serve`` with default settings but for the cluster, the store path and the port (and
    the offset collectors' interval with ``--interval``); with ``tree``, that source tree's code (its
    metrics worker inherits the ``PYTHONPATH``) instead of the installed one; ``cluster_extra``: more keys
    of the cluster's entry (a scope, say)."""
    store.mkdir(parents=True, exist_ok=True)
    port = free_port()
    settings = cluster.cluster_config("bench") | (cluster_extra or {})
    config: dict[str, Any] = {"clusters": [settings], "store": {"path": str(store / "offsetguard.db")}}
    if args.interval is not None:  # the offset collectors' rate changed (kminion's: once a scrape)
        config["intervals"] = {"offsets": args.interval, "committed": args.interval}
    (store / "offsetguard.yaml").write_text(yaml.safe_dump(config))
    serve = ["serve", "--config", str(store / "offsetguard.yaml"), "--port", str(port)]
    if tree is None:
        command, env = [str(Path(sys.executable).with_name("offsetguard")), *serve], dict(os.environ)
    else:
        # a tree from before the CLI left service/ (bench A/B runs over older commits) has service/cli.py
        module = "cli.main" if (tree / "cli" / "main.py").is_file() else "service.cli"
        main = f"import sys; from {module} import main; sys.exit(main())"
        command, env = [sys.executable, "-c", main, *serve], dict(os.environ, PYTHONPATH=str(tree))
    return ServiceRun(
        label=f"offsetguard-{label}",
        command=command,
        env=env,
        port=port,
        workdir=store,
        ready_path="/readyz",
        complete=_lag_series_at_least(
            b"offsetguard_group_lag_messages{", expected["committed_group_partitions"]
        ),
        args=args,
        profile_s=profile_s,
        cwd=tree,
    )


def kminion_run(
    binary: Path, cluster: SandboxCluster, workdir: Path, expected: dict[str, int], args: argparse.Namespace
) -> ServiceRun:
    """kminion (adminApi scrape mode, partition granularity: its defaults) on the same cluster."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    config = {
        "kafka": {"brokers": cluster.bootstrap_servers.split(",")},
        "minion": {
            "consumerGroups": {"enabled": True, "scrapeMode": "adminApi", "granularity": "partition"},
            "topics": {"enabled": True, "granularity": "partition"},
        },
        "exporter": {"namespace": "kminion", "host": "127.0.0.1", "port": port},
    }
    (workdir / "kminion.yaml").write_text(yaml.safe_dump(config))
    return ServiceRun(
        label="kminion",
        command=[str(binary)],
        env=dict(os.environ, CONFIG_FILEPATH=str(workdir / "kminion.yaml")),
        port=port,
        workdir=workdir,
        ready_path=None,
        complete=_lag_series_at_least(
            b"kminion_kafka_consumer_group_topic_partition_lag{", expected["committed_group_partitions"]
        ),
        args=args,
    )
