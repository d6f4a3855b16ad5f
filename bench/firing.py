"""bench/firing: what a fleet's firing alerts cost each evaluation (planning and storing them).

After a backlog a fleet holds thousands of firing ``lag_high`` alerts (28,000 in bench/service's warm run
at 50k partitions), each reported again by every evaluation. This folds ``--evaluations`` evaluations,
``--every`` seconds apart (the service's ``min_evaluation_interval_seconds``), of ``--firing`` lag
findings through :func:`service.detection.lifecycle.plan` into a SQLite :class:`~store.alerts.AlertStore`
(:meth:`~store.alerts.AlertStore.update_firing`, as :class:`~service.detection.loop.DetectionLoop` does),
each lag growing a little every evaluation: an alert is refreshed with its new magnitude at most every
``refresh_seconds`` (30 s), and at most ``refresh_limit`` (250) alerts an evaluation, those refreshed
longest ago first (a fleet's alerts in turn); an evaluation refreshing none is quiet. Reports CPU
seconds per quiet and per refreshing evaluation and per minute, and writes bench/results/firing.json.

    .venv/bin/python -m bench.firing [--firing 28000] [--evaluations 96] [--every 2.5]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from alerts.model import LAG_HIGH, Finding
from bench.result_file import write_result
from service.detection.lifecycle import LifecycleRules, Plan, plan
from service.memory import tune_gc
from store.alert_records import Alert, Fingerprint
from store.alerts import AlertStore
from store.settings import StoreSettings

CLUSTER = "bench"
COVERED = frozenset({LAG_HIGH})
_TOPICS = [f"topic-{t:04d}" for t in range(200)]
_GROUPS = [f"group-{g:05d}" for g in range(100_000)]


def _findings(n: int, step: int) -> list[Finding]:
    """``n`` lag findings (25 partitions a group, 200 topics), their lag ``step`` messages more. The group
    and topic names are the same objects at every evaluation, as the detectors' are (their committed
    offsets' keys): their hashes are computed once."""
    return [
        Finding(
            kind=LAG_HIGH,
            severity="warning",
            cluster=CLUSTER,
            group=_GROUPS[i // 25],
            topic=_TOPICS[i % 200],
            partition=i % 25,
            summary=f"lag {1000 + i + step} messages",
            magnitude={"lag_messages": 1000 + i + step, "lag_seconds": 900.0 + step},
            evidence={"committed": 10, "log_end": 1010 + i + step},
        )
        for i in range(n)
    ]


def _evaluate(
    store: AlertStore,
    findings: list[Finding],
    streaks: dict[Fingerprint, int],
    now: float,
    rules: LifecycleRules,
) -> tuple[float, int, dict[Fingerprint, int]]:
    """One evaluation's planning and writes, as the detection loop does them: CPU seconds, alerts
    written, the clean streaks after it."""
    planned: list[Plan] = []

    def planner(firing: Mapping[Fingerprint, Alert], resolved: frozenset[tuple[Fingerprint, str]]) -> Any:
        p = plan(firing, findings, COVERED, streaks, now, rules, resolved=resolved)
        planned.append(p)
        return p.writes

    t0 = time.process_time()
    written = store.update_firing(CLUSTER, planner, now, resolved_since=now - rules.quiet_period_seconds)
    return time.process_time() - t0, len(written), dict(planned[-1].clean_streaks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--firing", type=int, default=28_000)
    parser.add_argument("--evaluations", type=int, default=96)
    parser.add_argument("--every", type=float, default=2.5, help="seconds between evaluations")
    parser.add_argument("--out", default="firing.json", help="file name under bench/results/")
    args = parser.parse_args()
    rules = LifecycleRules()
    if (
        not 0 < args.every < rules.refresh_seconds
        or args.evaluations * args.every < rules.refresh_seconds + args.every
    ):
        parser.error(
            f"--every must be below the {rules.refresh_seconds:g} s refresh, and --evaluations span more than"
            " it: both quiet and refreshing evaluations are measured"
        )

    tune_gc()
    quiet: list[float] = []
    refreshing: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = AlertStore.open(StoreSettings(path=Path(tmp) / "alerts.db"))
        try:
            now = time.time()
            streaks: dict[Fingerprint, int] = {}
            for n in range(args.evaluations + 1):
                findings = _findings(args.firing, n)  # built outside the measure: the detectors' work
                spent, written, streaks = _evaluate(store, findings, streaks, now, rules)
                if n:  # the first fires them all
                    (refreshing if written else quiet).append(spent)
                now += args.every
            firing = len(store.firing(CLUSTER))
        finally:
            store.close()
    per_minute = (sum(quiet) + sum(refreshing)) / (args.evaluations * args.every) * 60.0
    result: dict[str, Any] = {
        "benchmark": "firing",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "setup": vars(args)
        | {
            "refresh_seconds": rules.refresh_seconds,
            "refresh_limit": rules.refresh_limit,
            "firing_at_end": firing,
        },
        "quiet_cpu_s": _figures(quiet),
        "refreshing_cpu_s": _figures(refreshing),
        "cpu_s_per_min": round(per_minute, 3),
    }
    write_result(args.out, result)
    print(
        f"RESULT {args.firing} firing lag alerts, an evaluation every {args.every:g} s: quiet"
        f" {result['quiet_cpu_s']['median']} CPU s (median), refreshing"
        f" {result['refreshing_cpu_s']['median']}"
        f" ({len(refreshing)} of {args.evaluations}); {result['cpu_s_per_min']} CPU s per minute"
    )


def _figures(spent: list[float]) -> dict[str, Any]:
    """Median, least and count of evaluations' CPU seconds (None where there were none)."""
    return {
        "median": round(statistics.median(spent), 4) if spent else None,
        "min": round(min(spent), 4) if spent else None,
        "count": len(spent),
    }


if __name__ == "__main__":
    main()
