"""bench/ha: how long failover takes with two replicas on one PostgreSQL store, and what the standby costs
(issue 46, docs/ha.md).

On a single-node sandbox populated as bench/service does (``--size`` partitions, 100 per topic, a group
per 10 partitions committed on 25; ``--churn`` of the partitions get a message and their groups a new
commit every 5 s) and one real PostgreSQL server (``tests.support.postgres``), two ``offsetguard serve``
replicas ``a`` and ``b`` run with default settings but for the cluster, the store (``store.url`` and
``store.password_file`` from the environment, as a pod gets them), the port and the replica id. Both are
scraped as Prometheus would (``/metrics`` every 15 s) and probed as a kubelet would (``/readyz`` every
10 s) throughout.

1. Steady state: once ``a`` is active and ``b`` standby, ``--settle`` s, then ``--steady`` s measured:
   each replica's CPU seconds per minute (its process tree, from /proc), resident memory (peak and at
   the end), and the database's own counters over the window (pg_stat_database transactions; the
   ``leader_lease`` table's row updates, i.e. renewals, and its index scans: lease cycles and the fencing
   checks inside guarded writes).
2. ``--rounds`` failovers: the active replica (from ``/readyz``) is SIGKILLed with its whole process tree
   (a pod or node lost); failover is the time from the kill until the other replica's ``/readyz`` says
   ``active`` (polled every 0.1 s). The lease's remaining time on the database's clock is read just
   before the kill: the takeover delay past it is the standby's wait for its next cycle. The killed
   replica is then restarted (same id and port, as a container restarted in its pod; after a random part
   of a renewal period, so that its lease cycles fall anywhere against the active's renewals) and must
   come back a ready standby; both are watched for two actives at once. Between rounds, ``--gap`` s plus
   a random part of a renewal period, so that kills fall anywhere in the renewal cycle.

Prints each round and the summary (failover p50/p99/max, nearest-rank), writes bench/results/ha.json.

    .venv/bin/python -m bench.ha [--rounds 12] [--steady 120] [--settle 90] [--size 500] [--churn 0.1]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench import proctree
from bench.ha_figures import per_second, result_line, role_of, summarise
from bench.ha_pair import Database, Prometheus, Replica
from bench.service_traffic import Churn, populate_size
from sandbox.cluster import SandboxCluster, start_sandbox
from service.settings import HASettings
from tests.support.postgres import PASSWORD, running_server

RESULTS = Path(__file__).resolve().parent / "results" / "ha.json"
ROOT = Path(__file__).resolve().parents[1]
POLL_S = 0.1  # how often the survivor is asked whether it is active
SLACK_S = 3.0  # failover beyond lease + renew + this is reported as over the documented bound


def until(check: Callable[[], bool], timeout: float, what: str, poll: float = POLL_S) -> float:
    t0 = time.monotonic()
    while not check():
        if time.monotonic() - t0 > timeout:
            raise RuntimeError(f"{what}: not within {timeout:.0f} s")
        time.sleep(poll)
    return time.monotonic() - t0


def steady_state(replicas: Sequence[Replica], db: Database, seconds: float) -> dict[str, Any]:
    roles = {r.name: r.role() for r in replicas}
    peaks = {r.name: proctree.RssPeak(r.pid) for r in replicas}
    cpu0 = {r.name: proctree.cpu_seconds(r.pid) for r in replicas}
    pg0, t0 = db.counters(), time.monotonic()
    time.sleep(seconds)
    cpu1 = {r.name: proctree.cpu_seconds(r.pid) for r in replicas}
    pg1, elapsed = db.counters(), time.monotonic() - t0
    out: dict[str, Any] = {"window_s": round(elapsed, 1)}
    for r in replicas:
        out[str(roles[r.name])] = {
            "replica": r.name,
            "cpu_s_per_min": round((cpu1[r.name] - cpu0[r.name]) * 60.0 / elapsed, 2),
            "peak_rss_mb": round(peaks[r.name].stop() / 1e6, 1),
            "rss_mb_end": round(proctree.rss_bytes(r.pid) / 1e6, 1),
        }
    out["roles_unchanged"] = roles == {r.name: r.role() for r in replicas}
    out["database_per_s"] = per_second(pg0, pg1, elapsed)
    return out


def one_round(
    n: int, replicas: Sequence[Replica], db: Database, ha: HASettings, args: argparse.Namespace
) -> dict[str, Any]:
    roles = {r.name: r.role() for r in replicas}
    actives = [r for r in replicas if roles[r.name] == "active"]
    out: dict[str, Any] = {"round": n, "roles_before": roles}
    if len(actives) != 1:
        raise RuntimeError(f"round {n}: {len(actives)} active replicas before the kill: {roles}")
    [dead] = actives
    [survivor] = [r for r in replicas if r is not dead]
    out["lease_at_kill"] = db.lease()
    dead.kill()
    out["killed"] = dead.name
    out["failover_s"] = round(until(lambda: survivor.role() == "active", 120, f"{survivor.name} active"), 2)
    out["takeover_after_expiry_s"] = round(out["failover_s"] - out["lease_at_kill"]["left_s"], 2)
    _, body = survivor.get("/readyz")
    out["epoch_after"] = body["leader"]["epoch"] if body else None
    out["over_bound"] = out["failover_s"] > ha.lease_seconds + ha.renew_seconds + SLACK_S
    # A random wait before the restart: the restarted replica's lease cycles (every renew_seconds from its
    # start) would otherwise keep one phase against the new active's, started a fixed boot time after its
    # takeover, and the next round's takeover delay past the expiry would always be that phase.
    out["restart_after_s"] = round(random.uniform(0.0, ha.renew_seconds), 2)
    time.sleep(out["restart_after_s"])
    dead.start()
    both: list[str] = []

    def standby_again() -> bool:
        status, body = dead.get("/readyz")
        if role_of(status, body) == "active" and survivor.role() == "active":
            both.append(time.strftime("%H:%M:%S"))
        return status == 200 and role_of(status, body) == "standby"

    out["restart_to_standby_s"] = round(until(standby_again, 300, f"{dead.name} a ready standby", 0.25), 2)
    wait = args.gap + random.uniform(0.0, ha.renew_seconds)
    flips: list[str] = []
    t0 = time.monotonic()
    while time.monotonic() - t0 < wait:  # both watched until the next kill: the roles must hold
        if not standby_again() or survivor.role() != "active":
            flips.append(
                f"{time.strftime('%H:%M:%S')} {dead.name}={dead.role()} {survivor.name}={survivor.role()}"
            )
        time.sleep(0.5)
    out["both_active_seen"], out["roles_moved_while_steady"] = both, flips
    print(f"[round {n}] {json.dumps(out)}", flush=True)
    return out


def git_state() -> dict[str, Any]:
    def git(*a: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), *a], capture_output=True, text=True).stdout

    # "XY path": the leading blank of an unstaged change is part of the line
    status = git("status", "--porcelain").splitlines()
    dirty = [line[3:] for line in status if line[:2] != "??"]
    return {"commit": git("rev-parse", "HEAD").strip(), "uncommitted_changes_run": dirty}


def start_pair(cluster: SandboxCluster, store_env: dict[str, str], root: Path) -> tuple[Replica, Replica]:
    """``a`` started first (it takes the lease), then ``b``, each waited for: ``a`` active, ``b`` a ready
    standby."""
    a, b = (Replica(name, cluster, store_env, root) for name in ("a", "b"))
    a.start()
    until(lambda: a.role() == "active", 300, "a active", 0.25)
    b.start()
    until(lambda: b.get("/readyz")[0] == 200 and b.role() == "standby", 300, "b a ready standby", 0.25)
    return a, b


def failovers(replicas: Sequence[Replica], db: Database, args: argparse.Namespace) -> dict[str, Any]:
    """``--rounds`` failovers; a round that cannot finish ends them (its error is the finding)."""
    ha = HASettings()
    out: dict[str, Any] = {}
    rounds: list[dict[str, Any]] = []
    try:
        for n in range(1, args.rounds + 1):
            rounds.append(one_round(n, replicas, db, ha, args))
    except Exception as exc:  # a replica that never took over or never came back: a finding, kept
        out["error"] = f"round {len(rounds) + 1}: {exc!r}"
        print(f"[round {len(rounds) + 1}] FAILED: {exc!r}", flush=True)
    out["rounds"] = rounds
    if rounds:
        out["failover"] = summarise([r["failover_s"] for r in rounds])
        out["takeover_after_expiry"] = summarise([r["takeover_after_expiry_s"] for r in rounds])
        out["restart_to_standby"] = summarise([r["restart_to_standby_s"] for r in rounds])
    out["rounds_over_bound"] = sum(r["over_bound"] for r in rounds)
    out["both_active_seen"] = sum(len(r["both_active_seen"]) for r in rounds)
    out["rounds_with_roles_moved"] = sum(bool(r["roles_moved_while_steady"]) for r in rounds)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="og-bench-ha-"))
    ha = HASettings()
    random.seed(args.seed)
    result: dict[str, Any] = {
        "benchmark": "ha",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        **git_state(),
        "setup": vars(args) | {"lease_seconds": ha.lease_seconds, "renew_seconds": ha.renew_seconds},
    }
    cluster = start_sandbox(root / "sandbox", brokers=1, timeout=300)
    churn = Churn(cluster, args.size, args.churn)
    try:
        populate_size(cluster, args.size)
        churn.start()
        with running_server(root / "postgres") as pg:
            url = pg.create_database("offsetguard")
            (root / "pg-password").write_text(PASSWORD + "\n")
            store_env = {  # as a pod gets them: the URL without its password, the password from a file
                "OFFSETGUARD_STORE__URL": url.replace(f":{PASSWORD}@", "@"),
                "OFFSETGUARD_STORE__PASSWORD_FILE": str(root / "pg-password"),
            }
            db = Database(url)
            replicas: list[Replica] = []
            prometheus: Prometheus | None = None
            try:
                replicas = list(start_pair(cluster, store_env, root))
                prometheus = Prometheus(replicas)
                prometheus.start()
                time.sleep(args.settle)
                result["steady"] = steady_state(replicas, db, args.steady)
                print(f"[steady] {json.dumps(result['steady'])}", flush=True)
                result |= failovers(replicas, db, args)
            finally:  # before the database stops
                if prometheus is not None:
                    prometheus.stop()
                    result["scrapes"] = prometheus.figures()
                for r in replicas:
                    r.stop()
                db.conn.close()
    finally:
        churn.stop()
        result["churn"] = churn.figures()
        cluster.down()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=12, help="failovers measured (at least 10)")
    parser.add_argument("--steady", type=float, default=120.0, help="seconds of steady state measured")
    parser.add_argument("--settle", type=float, default=90.0, help="seconds after both are up, before it")
    parser.add_argument(
        "--gap", type=float, default=10.0, help="seconds between a standby back and the next kill"
    )
    parser.add_argument("--size", type=int, default=500, help="partitions (100 a topic, a group per 10)")
    parser.add_argument("--churn", type=float, default=0.1, help="share of partitions moved every 5 s")
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--dir", help="working directory (default: a temporary one)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    result = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    result["setup"]["out"] = str(args.out)
    args.out.write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(result_line(result), flush=True)


if __name__ == "__main__":
    main()
