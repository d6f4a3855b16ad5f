"""``offsetguard collect``: one complete observation of a cluster, printed as JSON or a summary."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

from alerts.lag import partition_lags
from collectors.errors import ConfigError
from collectors.settings import ClusterSettings
from service.settings import load_settings


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "collect", help="collect one complete observation of a cluster and print it"
    )
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--bootstrap", help="bootstrap servers, host:port[,host:port...] (PLAINTEXT)")
    target.add_argument("--cluster", help="name of a cluster in --config (uses its security settings)")
    parser.add_argument("--config", type=Path, help="YAML settings file")
    parser.add_argument("--metrics-url", action="append", default=[], help="broker metrics URL (repeatable)")
    parser.add_argument(
        "--once", action="store_true", help="collect once and exit (default: every --every s)"
    )
    parser.add_argument(
        "--every", type=float, default=10.0, help="seconds between collections without --once"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a summary")
    parser.set_defaults(func=run)


def _cluster_settings(args: argparse.Namespace) -> ClusterSettings:
    if args.cluster:
        cluster = load_settings(args.config).cluster(args.cluster)
        if cluster is None:
            raise ConfigError(f"no cluster named {args.cluster!r} in the configuration", field="cluster")
        if args.metrics_url:
            cluster = cluster.model_copy(update={"metrics_urls": args.metrics_url})
        return cluster
    settings = load_settings(
        args.config,
        clusters=[{"name": "cli", "bootstrap_servers": args.bootstrap, "metrics_urls": args.metrics_url}],
    )
    return settings.clusters[0]


async def collect_once(cluster: ClusterSettings) -> dict[str, Any]:
    """Run every collector once against ``cluster``; a failed collector is reported, not raised."""
    from service.settings import Settings
    from service.state import LatestObservations
    from service.wiring import build_cluster_jobs

    latest = LatestObservations()
    jobs, close = build_cluster_jobs(cluster, Settings(clusters=[cluster]), latest, store=None)
    try:
        await jobs[0].run_once()  # metadata first: the others reuse it
        await asyncio.gather(*(job.run_once() for job in jobs[1:]))
    finally:
        await asyncio.to_thread(close)
    out: dict[str, Any] = {"cluster": cluster.name, "collected_at": time.time(), "errors": {}}
    for job in jobs:
        observation = latest.get(cluster.name, _observation_type(job.collector.name))
        if job.status.last_error is not None:
            out["errors"][job.collector.name] = job.status.last_error
        out[job.collector.name] = dataclasses.asdict(observation) if observation is not None else None
    if out.get("committed") and out.get("offsets"):
        committed, offsets = _typed(latest, cluster.name)
        out["lag"] = [dataclasses.asdict(row) for row in partition_lags(committed, offsets)]
    return out


def _observation_type(name: str) -> type[Any]:
    from collectors import model

    return {
        "metadata": model.ClusterMetadata,
        "offsets": model.OffsetsObservation,
        "groups": model.GroupsObservation,
        "committed": model.CommittedObservation,
        "configs": model.ConfigsObservation,
        "broker_metrics": model.MetricsObservation,
    }[name]


def _typed(latest: Any, cluster: str) -> tuple[Any, Any]:
    from collectors.model import CommittedObservation, OffsetsObservation

    return (
        latest.get(cluster, CommittedObservation).offsets,
        latest.get(cluster, OffsetsObservation).partitions,
    )


def _summary(out: dict[str, Any]) -> str:
    meta, groups = out.get("metadata") or {}, out.get("groups") or {}
    lines = [
        f"cluster {out['cluster']}: {len(meta.get('brokers', []))} broker(s), "
        f"{sum(len(t['partitions']) for t in meta.get('topics', []))} partition(s), "
        f"{len(groups.get('groups', []))} group(s)"
    ]
    lines.append(f"{'GROUP':30} {'TOPIC':30} {'PART':>5} {'COMMITTED':>12} {'LOG END':>12} {'LAG':>10}")
    for row in out.get("lag", []):
        lag = "?" if row["lag"] is None else row["lag"]
        lines.append(
            f"{row['group'][:30]:30} {row['topic'][:30]:30} {row['partition']:>5} "
            f"{row['committed']:>12} {row['log_end'] if row['log_end'] is not None else '?':>12} {lag:>10}"
        )
    for name, error in out["errors"].items():
        lines.append(f"! {name}: {error}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    cluster = _cluster_settings(args)
    while True:
        out = asyncio.run(collect_once(cluster))
        print(json.dumps(out, default=str) if args.json else _summary(out), flush=True)
        if args.once:
            return 1 if out["metadata"] is None else 0  # nothing at all could be observed
        time.sleep(args.every)
