"""One soak run: operations on a schedule, then incidents, judged from what ``offsetguard serve`` raised
and against what the consumers really read (:mod:`bench.soak.truth`)."""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from bench.serve_proc import Serve, until
from bench.soak import incidents, operations, truth
from bench.soak.incidents import Alert, Injected
from bench.soak.operations import BLIND, SCHEDULE, Timing
from bench.soak.world import TRAFFIC_RETENTION_MS, World, build, start_cluster

log = logging.getLogger("bench.soak")
CLUSTER = "soak"
PAGES = ("warning", "critical")
BLIND_AFTER_S = 180.0  # collector_failure raised this long after a blind operation ended is still its


@dataclass(frozen=True)
class Plan:
    minutes: float  # of operations
    groups: int = 50
    topics: int = 12
    rate: float = 100.0  # produced messages a second, over every topic
    gap: float = 60.0  # seconds between two operations
    warmup: float = 60.0  # seconds watched (from the service's readiness) before the first operation
    quiet: float = 60.0  # seconds watched after the last one, before the incidents
    incident_timeout: float = 240.0
    incident_retention_ms: int = incidents.RETENTION_MS  # what the retention incident cuts retention to
    retention_ms: int = TRAFFIC_RETENTION_MS  # of the traffic topics; keep it above outage + recovery
    schedule: tuple[str, ...] = tuple(op.__name__ for op in SCHEDULE)  # cycled; at least one pass
    timing: Timing = field(default_factory=lambda: Timing(settle=10.0, outage=150.0, quorum_loss=60.0))


def soak(plan: Plan, workdir: Path) -> dict[str, Any]:
    """Run the plan on a fresh sandbox in ``workdir``; the result as written to ``soak.json``."""
    started = time.time()
    phases: dict[str, float] = {}
    out: dict[str, Any] = {"plan": asdict(plan), "phases_s": phases}
    phase = Phases(phases)
    cluster = start_cluster(workdir / "sandbox")
    phase("sandbox")
    serve: Serve | None = None
    world: World | None = None
    try:
        serve = Serve(cluster, CLUSTER, workdir / "serve")
        # the topics and members start while the service does; the warmup is watched from its readiness
        with ThreadPoolExecutor(1) as pool:
            building = pool.submit(
                build, cluster, workdir, plan.groups, plan.topics, plan.rate, plan.retention_ms
            )
            try:
                out["ready_s"] = round(until(serve.ready, 180, "ready"), 1)
                ready_at = time.monotonic()
            finally:
                world = building.result()  # built (or its error) even if the service never got ready
        world.monitor_committed = serve.committed
        phase("build")
        time.sleep(max(0.0, ready_at + plan.warmup - time.monotonic()))
        phase("warmup")
        ops, blind = _operate(world, plan)
        phase("operations")
        time.sleep(plan.quiet)
        phase("quiet")
        injected = _inject(world, serve, plan, phase)
        out.update(truth.judge(world, serve, phase))  # stops the members
        alerts = serve.alerts()
        out.update(_judge(alerts, ops, blind, injected))
        t = world.traffic
        out["traffic"] = {"sent": t.sent, "send_errors": t.errors, "producers_replaced": t.replaced}
    finally:
        if world is not None:
            world.traffic.halt()
            world.members.close()
        if serve is not None:
            serve.stop()
        cluster.kill()  # the run's own sandbox: nothing is read from it again
    phase("teardown")
    out["duration_s"] = round(time.time() - started, 1)
    return out


class Phases:
    """``phase(name)`` notes (and logs) the seconds since the previous call under ``name``."""

    def __init__(self, into: dict[str, float]) -> None:
        self.into, self.at = into, time.monotonic()

    def __call__(self, name: str) -> None:
        now = time.monotonic()
        self.into[name] = round(self.into.get(name, 0.0) + now - self.at, 1)
        self.at = now
        log.info("phase %s %.1f s", name, self.into[name])


def _operate(world: World, plan: Plan) -> tuple[list[dict[str, Any]], list[tuple[float, float]]]:
    """Cycle through the schedule for ``plan.minutes``; what was done, and the blind windows."""
    ops: list[dict[str, Any]] = []
    blind: list[tuple[float, float]] = []
    end = time.monotonic() + plan.minutes * 60
    schedule = [getattr(operations, name) for name in plan.schedule]
    n = 0
    while n < len(schedule) or time.monotonic() < end:
        op = schedule[n % len(schedule)]
        n += 1
        t0 = time.time()
        record: dict[str, Any] = {"op": op.__name__, "at": round(t0, 1)}
        try:
            record["did"] = op(world, plan.timing)
        except Exception as exc:  # an operation that failed is reported; the schedule goes on
            record["error"] = repr(exc)
        record["seconds"] = round(time.time() - t0, 1)
        if op.__name__ in BLIND:
            blind.append((t0, time.time()))
        try:
            if revived := world.members.revive():  # a deployment restarts a consumer that exited
                record["revived"] = revived
        except Exception as exc:
            record["revive_error"] = repr(exc)
        log.info("op %s", record)
        ops.append(record)
        time.sleep(plan.gap)
    return ops, blind


def _inject(world: World, serve: Serve, plan: Plan, phase: Phases) -> list[Injected]:
    """Every incident, one after another; their alerts are waited for once the last is injected (each has
    its own groups and topics). Retention's goes first: it takes half a minute to pass."""
    done: list[Injected] = []
    for inject in (
        lambda: incidents.retention_passes_stuck_group(world, plan.incident_retention_ms),
        lambda: incidents.rewind(world, "classic"),
        lambda: incidents.rewind(world, "consumer"),
        lambda: incidents.unclean_truncation(world, serve),
    ):
        try:
            incident = inject()
        except Exception as exc:  # not injected: reported, not caught
            done.append(Injected(f"failed: {exc!r}", time.time(), set(), set(), []))
            phase("incident_failed_inject")
            continue
        phase(f"incident_{incident.name}_inject")
        done.append(incident)
    for incident in done:
        _catch(serve, incident, plan)
        phase(f"incident_{incident.name}_catch")
    return done


def _catch(serve: Serve, incident: Injected, plan: Plan) -> None:
    """Wait for each alert ``incident`` expects (at most ``plan.incident_timeout`` from now) and note it."""
    for want in incident.expect:
        try:
            until(partial(_raised, serve, want), plan.incident_timeout, want.kind)
        except RuntimeError:
            incident.found[want.kind] = {"caught": False}
            continue
        alert = min((a for a in serve.alerts() if want.matches(a)), key=lambda a: a["started_at"])
        incident.found[want.kind] = {
            "caught": want.caught(alert),
            "kind": alert["kind"],
            "severity": alert["severity"],
            "cause": alert.get("cause"),
            "magnitude": alert["magnitude"],
            "wanted": want.wanted,
            "latency_s": round(alert["started_at"] - incident.at, 2),
        }
    log.info("incident %s %s", incident.name, incident.found)


def _raised(serve: Serve, want: incidents.Expect) -> bool:
    return any(want.matches(a) for a in serve.alerts())


def _within(at: float, blind: list[tuple[float, float]]) -> bool:
    return any(start <= at <= end + BLIND_AFTER_S for start, end in blind)


def _named_groups_injected(alert: Alert, injected: list[Injected]) -> bool:
    """A cluster-wide ``out_of_range_fetches`` page is explained when every group it names as committed
    outside its log (its evidence, ``"<group> <topic>[<p>]=<offset> (<start>..<end>)"``) is an injected
    incident's, injected before it."""
    if alert["kind"] != "out_of_range_fetches":
        return False
    named = {o.split(" ")[0] for o in alert["evidence"].get("committed_outside_range", ())}
    ours = {g for i in injected if alert["started_at"] >= i.at - 1 for g in i.groups}
    return bool(named) and named <= ours


def _judge(
    alerts: list[Alert], ops: list[dict[str, Any]], blind: list[tuple[float, float]], injected: list[Injected]
) -> dict[str, Any]:
    false_pages, blind_pages, incident_pages = [], 0, 0
    for a in sorted(alerts, key=lambda a: a["started_at"]):
        if a["severity"] not in PAGES:
            continue
        if any(i.owns(a) for i in injected) or _named_groups_injected(a, injected):
            incident_pages += 1
        elif a["kind"] == "collector_failure" and _within(a["started_at"], blind):
            blind_pages += 1
        else:
            false_pages.append(a)
    by_type: dict[str, int] = {}
    for o in ops:
        by_type[o["op"]] = by_type.get(o["op"], 0) + 1
    caught = [i for i in injected if i.expect and all(f.get("caught") for f in i.found.values())]
    return {
        "operations": by_type,
        "operation_errors": [o for o in ops if "error" in o],
        "operations_log": ops,
        "false_pages": [
            {
                k: a.get(k)
                for k in (
                    "kind",
                    "severity",
                    "cause",
                    "group",
                    "topic",
                    "partition",
                    "started_at",
                    "magnitude",
                    "evidence",
                    "summary",
                )
            }
            for a in false_pages
        ],
        "false_page_count": len(false_pages),
        "blind_collector_failures": blind_pages,
        "incident_pages": incident_pages,
        "incidents": [{"name": i.name, "at": round(i.at, 1), "found": i.found} for i in injected],
        "incidents_injected": len(injected),
        "incidents_caught": len(caught),
        "info_alerts": sorted({a["kind"] for a in alerts if a["severity"] == "info"}),
    }
