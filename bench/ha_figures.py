"""bench/ha's figures, pure: percentiles by nearest rank, the role in a ``/readyz`` answer, the leader
gauges in an exposition, counters' rates, the run's one-line result (tests/bench/test_ha_figures.py)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

_GAUGE = re.compile(r'^offsetguard_leader(?P<epoch>_epoch)?(?:\{replica="(?P<replica>[^"]*)"\})? (?P<v>\S+)$')


def nearest_rank(values: Sequence[float], q: float) -> float:
    """The ``q``-quantile by nearest rank: the smallest value with at least ``q`` of them at or below it
    (an observed value; p99 of fewer than 100 values is their maximum)."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def summarise(failovers: Sequence[float]) -> dict[str, Any]:
    return {
        "n": len(failovers),
        "p50_s": round(nearest_rank(failovers, 0.50), 2),
        "p99_s": round(nearest_rank(failovers, 0.99), 2),
        "max_s": round(max(failovers), 2),
        "min_s": round(min(failovers), 2),
    }


def role_of(status: int, body: Any) -> str | None:
    """The replica's role from a ``/readyz`` answer (200 or 503: the body says it either way); None when
    it did not answer with a leader view."""
    if status not in (200, 503) or not isinstance(body, dict) or not isinstance(body.get("leader"), dict):
        return None
    role = body["leader"].get("role")
    return role if isinstance(role, str) else None


def leader_gauges(exposition: str) -> dict[str, Any]:
    """``offsetguard_leader{replica}`` and ``offsetguard_leader_epoch`` from a text exposition."""
    out: dict[str, Any] = {"leader": {}, "epoch": None}
    for line in exposition.splitlines():
        m = _GAUGE.match(line)
        if m is None:
            continue
        if m["epoch"]:
            out["epoch"] = float(m["v"])
        elif m["replica"] is not None:
            out["leader"][m["replica"]] = float(m["v"])
    return out


def per_second(before: dict[str, float], after: dict[str, float], seconds: float) -> dict[str, float]:
    """Each counter's rate over the window."""
    return {k: round((after[k] - before[k]) / seconds, 3) for k in before if k in after}


def result_line(result: dict[str, Any]) -> str:
    """The run in one line: failover percentiles, what each role costs, the database's rates."""
    parts = []
    if "failover" in result:
        f = result["failover"]
        parts.append(
            f"failover over {f['n']} kills: p50 {f['p50_s']} s, p99 {f['p99_s']} s, max {f['max_s']} s"
            f" ({result['rounds_over_bound']} over the bound, {result['both_active_seen']} double actives)"
        )
    if "error" in result:
        parts.append(f"ERROR {result['error']}")
    s = result.get("steady", {})
    for role in ("active", "standby"):
        if role in s:
            parts.append(f"{role} {s[role]['cpu_s_per_min']} CPU s/min, peak RSS {s[role]['peak_rss_mb']} MB")
    if "database_per_s" in s:
        parts.append(f"database per s {s['database_per_s']}")
    return "RESULT " + "; ".join(parts)
