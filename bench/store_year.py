"""bench/store_year: a year of a fleet's life in a fresh store; its size, the API's latency and serve's
start on it.

The year (``bench/store_year_fleet.py``: history, weekly consumer and broker rolling restarts, incidents
and lag alerts, notifications, the service's prunes on a simulated clock) ends now, so a served store
reads as a live one. The file's size (after a WAL checkpoint, WAL included) is taken every 30 days, at
the retention horizon (the longest retention, ``store.alerts_retention_days``, 90 days by default: from
then on every kind of row is deleted as fast as it is added) and after the year; the target is a year's
size within 1.1x the horizon's. Deleted pages go to SQLite's freelist (``auto_vacuum`` is off) and later
writes reuse them, which the freelist figures show.

Then ``offsetguard serve`` (default settings, one cluster at 127.0.0.1:1, which refuses connections) is
started on the store: time to ready is from its start to the first ``/healthz`` 200, the server
answering with the store opened and migrated (``/readyz`` stays 503 while the cluster is unreachable:
its collectors are stale). ``--settle`` s later (past the service's start: detection launches within
15 s, the collectors' first failures and retries; the seconds right after ready measure that start,
not the store), ``--requests`` rounds of sequential requests, one per endpoint each, p50/p99 in ms: the alert
list (a random page of the whole list, so no page comes from the reader's cache), a group's alerts (the
console's group page: ``limit=500``), a group's history over the console's widest window (7 days) and
the console's overview (clusters, firing alerts, the first page of groups, ``/readyz``: each, and the
four in turn). Targets: p99 <= 50 ms, ready <= 10 s.

    .venv/bin/python -m bench.store_year [--groups 2000] [--partitions 2] [--step 7200] [--days 365]
        [--incidents 4] [--lag-alerts 50] [--requests 200] [--no-serve]

``--step`` is the history's sampling: the service records every change (every 5 s for an active group)
and thins rows older than a day to one per 5 minutes; a year of that is ~10^9 rows to write, so the
default writes one sample every two hours (12 a day, ~26 M history rows in the year: the sizes scale
with it, the bound does not depend on it). Writes
``bench/results/store_year.json``. ``--serve-only --keep DIR`` measures serve again on the store a run
left in DIR (its earlier figures kept as ``serve_previous``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import yaml

from bench.service_run import free_port, terminate
from bench.store_year_fleet import CLUSTER, DAY, Clock, Fleet, Writer
from service.settings import Settings, load_settings

RESULTS = Path(__file__).resolve().parent / "results" / "store_year.json"
TABLES = ("committed_history", "partition_offsets_history", "alerts", "alert_transitions", "notifications")
TARGET_RATIO, TARGET_P99_MS, TARGET_READY_S = 1.1, 50.0, 10.0


def size(path: Path) -> dict[str, Any]:
    """The file after a checkpoint (WAL included), its pages and freelist, and the rows of each table."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages, free, page_size = (
            conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "freelist_count", "page_size")
        )
        rows = {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}
    wal = path.with_name(path.name + "-wal")
    total = path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    return {"bytes": total, "mb": round(total / 1e6, 1), "pages": pages, "free_pages": free,
            "page_size": page_size, "rows": rows}  # fmt: skip


def synthesise(settings: Settings, fleet: Fleet, days: int, end: float, horizon: int) -> dict[str, Any]:
    """Write ``days`` days ending at ``end``; sizes every 30 days, at ``horizon`` days and at the end."""
    writer, clock = Writer(settings), Clock()
    sizes: dict[str, Any] = {}
    started = time.perf_counter()
    try:
        for d in range(days):
            writer.day(fleet, clock, end - (days - d) * DAY)
            done = d + 1
            if done in (horizon, days) or done % 30 == 0:
                sizes[str(done)] = size(settings.store.path)
                print(f"day {done:3}: {sizes[str(done)]['mb']} MB  {time.perf_counter() - started:.0f} s",
                      flush=True)  # fmt: skip
    finally:
        writer.close()
    return {"synthesis_s": round(time.perf_counter() - started, 1), "sizes": sizes}


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def measure_serve(
    settings: Settings, workdir: Path, fleet: Fleet, end: float, requests: int, settle: float
) -> dict[str, Any]:
    """``offsetguard serve`` on the store: time to the first /healthz 200, then, ``settle`` s later, each
    endpoint's latency."""
    port = free_port()
    config = {
        "clusters": [{"name": CLUSTER, "bootstrap_servers": ["127.0.0.1:1"]}],
        "store": {"path": str(settings.store.path)},
        "snapshots": {"directory": str(workdir / "snapshots")},
    }
    (workdir / "offsetguard.yaml").write_text(yaml.safe_dump(config))
    cli = Path(sys.executable).with_name("offsetguard")
    log = (workdir / "serve.log").open("wb")
    started = time.monotonic()
    proc = subprocess.Popen(
        [str(cli), "serve", "--config", str(workdir / "offsetguard.yaml"), "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            ready = None
            while ready is None and time.monotonic() - started < 120 and proc.poll() is None:
                try:
                    if http.get("/healthz").status_code == 200:
                        ready = time.monotonic() - started
                except httpx.TransportError:
                    time.sleep(0.05)
            if ready is None:
                raise RuntimeError(f"serve not answering /healthz: see {workdir / 'serve.log'}")
            readyz = http.get("/readyz").status_code
            time.sleep(settle)
            return {"settle_s": settle, "ready_s": round(ready, 2), "readyz_status_then": readyz,
                    "endpoints": _latencies(http, fleet, end, requests)}  # fmt: skip
    finally:
        terminate(proc)
        log.close()


def _latencies(http: httpx.Client, fleet: Fleet, end: float, requests: int) -> dict[str, Any]:
    rng = random.Random(7)
    top = int(http.get("/api/v1/alerts", params={"limit": 1}).json()["next_cursor"] or 1)  # newest seq

    def group() -> tuple[str, int]:
        g = rng.randrange(fleet.groups)
        return fleet.group(g), g

    def history() -> str:
        name, g = group()
        return (f"/api/v1/clusters/{CLUSTER}/groups/{name}/history?topic={fleet.topic(g)}&partition=0"
                f"&since={end - 7 * DAY:.3f}")  # fmt: skip

    overview = [
        "/api/v1/clusters",
        "/api/v1/alerts?status=firing&limit=50",
        f"/api/v1/clusters/{CLUSTER}/groups?limit=50",
        "/readyz",
    ]
    paths: dict[str, Callable[[], str]] = {
        "alert_list": lambda: f"/api/v1/alerts?limit=50&cursor={rng.randrange(2, top + 1)}",
        "group_alerts": lambda: f"/api/v1/alerts?cluster={CLUSTER}&group={group()[0]}&limit=500",
        "group_history_7d": history,
        **{f"overview{p.split('?')[0]}": partial(str, p) for p in overview},
    }
    out: dict[str, Any] = {}
    times: dict[str, list[float]] = {name: [] for name in paths}
    errors = dict.fromkeys(paths, 0)
    for i in range(requests + 5):  # round robin: a pause of the server's is shared by every endpoint
        for name, path in paths.items():
            t0 = time.perf_counter()
            status = http.get(path()).status_code
            if i >= 5:  # the first few warm the server's caches and connections
                times[name].append((time.perf_counter() - t0) * 1000)
                errors[name] += status not in (200, 503)
    for name, values in times.items():
        out[name] = {"p50_ms": _p(values, 0.5), "p99_ms": _p(values, 0.99), "errors": errors[name]}
    parts = [out[f"overview{p.split('?')[0]}"]["p99_ms"] for p in overview]
    out["overview_all_four_p99_sum_ms"] = round(sum(parts), 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=2000)
    parser.add_argument("--partitions", type=int, default=2, help="per group (two groups share a topic)")
    parser.add_argument("--step", type=float, default=7200.0, help="seconds between history samples")
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--incidents", type=int, default=4, help="event-like alerts a day")
    parser.add_argument("--lag-alerts", type=int, default=50, help="lag alerts a day")
    parser.add_argument("--stuck", type=int, default=20, help="groups whose lag alert fires all year")
    parser.add_argument("--retention-days", type=float, default=None, help="store.retention_days")
    parser.add_argument("--alerts-retention-days", type=float, default=None)
    parser.add_argument("--requests", type=int, default=200, help="per endpoint")
    parser.add_argument("--no-serve", action="store_true", help="synthesise and size only")
    parser.add_argument("--settle", type=float, default=20.0, help="seconds between ready and the requests")
    parser.add_argument(
        "--serve-only", action="store_true", help="measure serve on the store --keep holds (no synthesis)"
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--keep", type=Path, default=None, help="leave the store in this directory")
    args = parser.parse_args()
    print(json.dumps(run(args), indent=2))


def run(args: argparse.Namespace) -> dict[str, Any]:
    fleet = Fleet(args.groups, args.partitions, args.step, args.incidents, args.lag_alerts, args.stuck)
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="og-store-year-"))
    workdir.mkdir(parents=True, exist_ok=True)
    store: dict[str, Any] = {"path": str(workdir / "offsetguard.db")}
    for key in ("retention_days", "alerts_retention_days"):
        if getattr(args, key) is not None:
            store[key] = getattr(args, key)
    settings = load_settings(clusters=[{"name": CLUSTER, "bootstrap_servers": "127.0.0.1:1"}], store=store)
    horizon = int(max(settings.store.alerts_retention_days, settings.store.retention_days))
    end = time.time()
    result: dict[str, Any] = {
        "fleet": dataclasses.asdict(fleet),
        "days": args.days,
        "horizon_days": horizon,
        "store_settings": settings.store.model_dump(mode="json", exclude={"path"}),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "sqlite": sqlite3.sqlite_version,
        },
    }
    if args.serve_only:  # the store a run kept: its sizes are in --out already
        result = json.loads(args.out.read_text()) if args.out.exists() else result
        with sqlite3.connect(settings.store.path) as conn:
            end = conn.execute("SELECT max(last_seen_at) FROM latest_committed").fetchone()[0]
        if "serve" in result:
            result["serve_previous"] = result["serve"]
    else:
        result |= synthesise(settings, fleet, args.days, end, horizon)
    sizes = result.get("sizes", {})
    if str(horizon) in sizes and args.days > horizon:
        ratio = sizes[str(args.days)]["bytes"] / sizes[str(horizon)]["bytes"]
        result["size_ratio_year_to_horizon"] = round(ratio, 3)
        result["size_ratio_ok"] = ratio <= TARGET_RATIO
    if not args.no_serve:
        served = measure_serve(settings, workdir, fleet, end, args.requests, args.settle)
        result["serve"] = served
        p99s = [v["p99_ms"] for k, v in served["endpoints"].items() if isinstance(v, dict)]
        result["p99_ok"] = max(p99s) <= TARGET_P99_MS
        result["ready_ok"] = served["ready_s"] <= TARGET_READY_S
    result["targets"] = {"size_ratio": TARGET_RATIO, "p99_ms": TARGET_P99_MS, "ready_s": TARGET_READY_S}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
