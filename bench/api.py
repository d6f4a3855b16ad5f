"""bench/api: latency of the on-call API under load, with and without ``/metrics`` being scraped.

A synthetic store with ``--groups`` groups (one committed partition each, offsets history, ``--alerts``
alerts) is served by uvicorn in its own process; a separate load process (asyncio + httpx, open loop)
sends ``--rate`` requests/s for ``--duration`` s, alternating ``GET /api/v1/alerts?limit=50`` and
``GET /api/v1/clusters/bench/groups/<random group>``. Phase "idle" runs the load alone; phase "scraped"
runs it while a third process scrapes ``/metrics`` (>= 100,000 series) back to back, asking for gzip as
Prometheus does. The server's observations are replaced by new objects at the default collector
intervals (offsets and committed offsets every 5 s), so renders pay for fresh snapshots as a running
service's would.

    .venv/bin/python -m bench.api [--groups 10000] [--rate 200] [--duration 20] [--console-rounds 30]

Phase "console" then opens the on-call console's pages in Debian's Chromium (bench/console.py) on the
same server: overview, an alert, a group with its timeline, a search, the next page of groups.

Prints the figures and writes bench/results/api.json (api-<N>-groups.json for another --groups: the
console's target is at 2,000 groups, ``--groups 2000``). Everything it starts, it stops.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
CLUSTER = "bench"
TARGET_P99_MS = 50.0
DEFAULT_GROUPS = 10_000


def _metrics_args(groups: int) -> argparse.Namespace:
    return argparse.Namespace(topics=50, partitions=100, groups=groups, per_group=1)


def _settings(directory: Path) -> Any:
    from service.settings import load_settings

    return load_settings(
        clusters=[{"name": CLUSTER, "bootstrap_servers": "127.0.0.1:1"}],
        store={"path": str(directory / "og.db")},
        snapshots={"directory": str(directory / "snapshots")},
    )


def seed(directory: Path, groups: int, alerts: int, now: float) -> None:
    """The store and alert store the server reads (the observations are rebuilt in the server)."""
    from bench.api_metrics import observations
    from bench.api_metrics import seed as seed_offsets
    from store import Store
    from store.alert_records import FIRING, Alert, AlertWrite
    from store.alerts import AlertStore

    settings = _settings(directory)
    inputs = observations(_metrics_args(groups), now)
    assert inputs.committed is not None
    with Store.open(settings.store) as store:
        seed_offsets(store, inputs, 10, now)
        store.record_committed(inputs.committed)
    rows = []
    for i in range(alerts):
        c = inputs.committed.offsets[(i * 7) % len(inputs.committed.offsets)]
        at = now - alerts + i
        rows.append(
            Alert(
                id=f"bench-{i:06d}",
                kind="lag_high",
                severity=("warning", "critical")[i % 2],
                status=FIRING,
                cluster=CLUSTER,
                group=c.group,
                topic=c.topic,
                partition=c.partition,
                started_at=at,
                updated_at=at,
                summary=f"lag of {c.group}",
                cause=None,
                magnitude={"lag": 100},
                magnitude_total={"lag": 100},
                evidence={"threshold": 50},
                occurrence=f"o{i}",
                occurrences=1,
            )
        )
    with AlertStore.open(settings.store) as alert_store:
        for start in range(0, len(rows), 500):
            writes = [AlertWrite(a, True, "fired") for a in rows[start : start + 500]]

            def planner(firing: Any, done: Any, w: list[AlertWrite] = writes) -> list[AlertWrite]:
                return w

            alert_store.update_firing(CLUSTER, planner, now)


def serve(directory: Path, port: int, groups: int, now: float) -> None:
    """The app over the seeded store plus in-memory observations (what /metrics renders), replaced by
    new observation objects at the default collector intervals as a running service's would be (with
    ``metrics.render_worker`` on, each replacement is compacted again for the worker: that cost is part
    of the measurement)."""
    import uvicorn

    from bench.api_metrics import observations
    from service.app import create_app
    from service.runtime import Runtime
    from service.settings import IntervalSettings
    from service.state import LatestObservations
    from store import Store
    from store.alerts import AlertStore

    settings = _settings(directory)
    inputs = observations(_metrics_args(groups), now)
    latest = LatestObservations()
    intervals = IntervalSettings()
    every = {
        "metadata": intervals.metadata,
        "offsets": intervals.offsets,
        "groups": intervals.groups,
        "committed": intervals.committed,
    }

    async def refresh(name: str, period: float) -> None:
        obs = getattr(inputs, name)
        while True:
            await latest.put(dataclasses.replace(obs, observed_at=time.time()))  # a new object
            await asyncio.sleep(period)

    def runtime_factory(s: Any) -> Runtime:
        return Runtime(s, store=Store.open(s.store), latest=latest, jobs=[], alerts=AlertStore.open(s.store))

    app = create_app(settings, runtime_factory=runtime_factory)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    )

    async def main() -> None:
        tasks = [asyncio.create_task(refresh(name, period)) for name, period in every.items()]
        try:
            await server.serve()
        finally:
            for task in tasks:
                task.cancel()

    asyncio.run(main())


async def _load(url: str, rate: float, duration: float, groups: int, seed_value: int) -> dict[str, Any]:
    import httpx

    rng = random.Random(seed_value)
    latencies: dict[str, list[float]] = {"alerts": [], "group": []}
    errors: list[str] = []
    late: list[float] = []
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=10.0) as client:

        async def one(kind: str, path: str) -> None:
            started = time.perf_counter()
            try:
                response = await client.get(path)
                if response.status_code != 200:
                    errors.append(f"{path}: {response.status_code}")
                    return
            except httpx.HTTPError as exc:
                errors.append(f"{path}: {type(exc).__name__}")
                return
            latencies[kind].append((time.perf_counter() - started) * 1000)

        tasks = []
        start = time.perf_counter()
        total = int(rate * duration)
        for i in range(total):
            due = start + i / rate
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            else:
                late.append(-delay * 1000)
            if i % 2:
                path = f"/api/v1/clusters/{CLUSTER}/groups/group-{rng.randrange(groups):04d}"
                tasks.append(asyncio.create_task(one("group", path)))
            else:
                tasks.append(asyncio.create_task(one("alerts", "/api/v1/alerts?limit=50")))
        await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - start
    return {"latencies_ms": latencies, "errors": errors, "sent": total, "elapsed_s": elapsed,
            "sender_late_ms_max": max(late, default=0.0)}  # fmt: skip


def _scrape(url: str, duration: float) -> dict[str, Any]:
    import httpx

    took, sizes, text = [], [], ""
    deadline = time.monotonic() + duration
    with httpx.Client(base_url=url, timeout=60.0) as client:
        while time.monotonic() < deadline:
            started = time.perf_counter()
            response = client.get("/metrics")
            took.append(time.perf_counter() - started)
            sizes.append(len(response.content))
            text = response.text
    # Counted once, after the loop: counting 200,000 lines per scrape took a core of this 2-core
    # machine away from the server under test whenever scrapes came back quickly.
    series = sum(1 for line in text.splitlines() if line and not line.startswith("#"))
    return {"scrapes": len(took), "scrape_s": took, "body_bytes": sizes[-1] if sizes else 0, "series": series}


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)

    def q(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]

    return {"n": len(ordered), "p50": q(0.50), "p90": q(0.90), "p99": q(0.99), "max": ordered[-1],
            "mean": statistics.fmean(ordered)}  # fmt: skip


def _wait_up(url: str, timeout: float, server: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if server.poll() is not None:
            raise RuntimeError("the bench server exited")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("the bench server did not come up")
        time.sleep(0.2)


def _child(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "bench.api", *args], stdout=subprocess.PIPE, text=True)


def _console(url: str, args: argparse.Namespace) -> dict[str, Any]:
    """The console's page latencies in a real browser, load and scrapes over (see bench/console.py)."""
    from bench import console

    why_not = console.available() if args.console_rounds > 0 else "--console-rounds 0"
    if why_not is not None:
        return {"skipped": why_not}
    alert_ids = [f"bench-{i:06d}" for i in range(args.alerts)]
    out = console.measure(url, CLUSTER, args.groups, alert_ids, args.console_rounds)
    return {
        "browser": "Debian chromium, headless, Playwright; until the page is drawn (body[data-ready=true])",
        "rounds": args.console_rounds,
        "target_p99_ms": console.TARGET_P99_MS,
        "pages_ms": {kind: _percentiles(values) for kind, values in out["pages_ms"].items()},
        "errors": out["errors"][:10],
    }


def run(args: argparse.Namespace) -> None:
    now = time.time()
    with tempfile.TemporaryDirectory(prefix="og-bench-api-") as tmp:
        directory = Path(tmp)
        t0 = time.perf_counter()
        seed(directory, args.groups, args.alerts, now)
        seeded = time.perf_counter() - t0
        port = args.port
        url = f"http://127.0.0.1:{port}"
        server = _child(
            "serve", "--dir", tmp, "--port", str(port), "--groups", str(args.groups), "--now", str(now)
        )
        children = [server]
        try:
            _wait_up(url, 120, server)
            common = ["--url", url, "--groups", str(args.groups), "--rate", str(args.rate)]
            limit = args.duration * 10 + 120
            children.append(warm := _child("load", *common, "--duration", "3"))
            warm.communicate(timeout=limit)
            children.append(idle := _child("load", *common, "--duration", str(args.duration)))
            idle_out = json.loads(idle.communicate(timeout=limit)[0])
            children.append(scraper := _child("scrape", "--url", url, "--duration", str(args.duration + 4)))
            time.sleep(2.0)  # the first scrape is under way before the load starts
            children.append(
                scraped := _child("load", *common, "--duration", str(args.duration), "--seed", "2")
            )
            scraped_out = json.loads(scraped.communicate(timeout=limit)[0])
            scrape_out = json.loads(scraper.communicate(timeout=limit + 300)[0])
            console_out = _console(url, args)
        finally:
            for child in reversed(children):  # everything started here is stopped here
                if child.poll() is None:
                    child.terminate()
                try:
                    child.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()

    def phase(out: dict[str, Any]) -> dict[str, Any]:
        return {
            "sent": out["sent"],
            "elapsed_s": out["elapsed_s"],
            "errors": len(out["errors"]),
            "error_samples": out["errors"][:5],
            "sender_late_ms_max": out["sender_late_ms_max"],
            "alerts_ms": _percentiles(out["latencies_ms"]["alerts"]),
            "group_ms": _percentiles(out["latencies_ms"]["group"]),
        }

    result: dict[str, Any] = {
        "benchmark": "api",
        "when": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average_1m_at_end": os.getloadavg()[0],  # the 2 cores are shared with other work
        },
        "setup": {
            **vars(args),
            "seed_s": seeded,
            "server": "uvicorn, 1 process",
            "load": "separate process",
            "observations": "replaced at the default collector intervals (offsets, committed 5 s)",
        },
        "target_p99_ms": TARGET_P99_MS,
        "idle": phase(idle_out),
        "scraped": phase(scraped_out),
        "metrics": {
            "series": scrape_out["series"],
            "body_bytes": scrape_out["body_bytes"],
            "scrapes_during_phase": scrape_out["scrapes"],
            "scrape_s": _percentiles(scrape_out["scrape_s"]),
        },
    }
    result["console"] = console_out
    for name in ("idle", "scraped"):
        p = result[name]
        print(
            f"{name}: alerts p50 {p['alerts_ms']['p50']:.1f} ms p99 {p['alerts_ms']['p99']:.1f} ms; "
            f"group p50 {p['group_ms']['p50']:.1f} ms p99 {p['group_ms']['p99']:.1f} ms; errors {p['errors']}"
        )
    m = result["metrics"]
    print(
        f"/metrics: {m['series']} series, {m['scrapes_during_phase']} scrapes,"
        f" median {m['scrape_s']['p50']:.2f} s"
    )
    if "pages_ms" in console_out:
        pages = ", ".join(
            f"{k} p50 {v['p50']:.0f} ms p99 {v['p99']:.0f} ms"
            for k, v in console_out["pages_ms"].items()
            if v
        )
        print(f"console ({args.groups} groups): {pages}; errors {len(console_out['errors'])}")
    else:
        print(f"console: {console_out['skipped']}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = "api.json" if args.groups == DEFAULT_GROUPS else f"api-{args.groups}-groups.json"
    (RESULTS / name).write_text(json.dumps(result, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="mode")
    bench = sub.add_parser("run")
    for p in (parser, bench):
        p.add_argument("--groups", type=int, default=DEFAULT_GROUPS)
        p.add_argument("--alerts", type=int, default=2_000)
        p.add_argument("--rate", type=float, default=200.0)
        p.add_argument("--duration", type=float, default=20.0)
        p.add_argument("--port", type=int, default=18_080)
        p.add_argument("--console-rounds", type=int, default=30, help="browser visits of each console page")
    s = sub.add_parser("serve")
    s.add_argument("--dir", type=Path, required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--groups", type=int, required=True)
    s.add_argument("--now", type=float, required=True)
    ld = sub.add_parser("load")
    ld.add_argument("--url", required=True)
    ld.add_argument("--groups", type=int, required=True)
    ld.add_argument("--rate", type=float, required=True)
    ld.add_argument("--duration", type=float, required=True)
    ld.add_argument("--seed", type=int, default=1)
    sc = sub.add_parser("scrape")
    sc.add_argument("--url", required=True)
    sc.add_argument("--duration", type=float, required=True)
    args = parser.parse_args()
    if args.mode == "serve":
        serve(args.dir, args.port, args.groups, args.now)
    elif args.mode == "load":
        print(json.dumps(asyncio.run(_load(args.url, args.rate, args.duration, args.groups, args.seed))))
    elif args.mode == "scrape":
        print(json.dumps(_scrape(args.url, args.duration)))
    else:
        run(args)


if __name__ == "__main__":
    main()
