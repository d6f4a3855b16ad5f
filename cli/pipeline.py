"""``offsetguard pipeline history``: the Spark job over the archive, snapshots or ``__consumer_offsets``.

Arguments are the job's own (:func:`pipeline.job.add_arguments`) plus the session (``--master``) and
``--config``/``--cluster`` to take paths, bootstrap servers and security from the settings. PySpark is
an optional dependency (``pip install 'offsetguard[spark]'``): it is imported only when the command runs.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from collectors.errors import ConfigError
from collectors.settings import ClusterSettings
from service.settings import Settings, load_settings

if TYPE_CHECKING:
    from pipeline.options import AnalysisSettings


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "pipeline", help="Spark jobs over the offset-commit history"
    )
    jobs = parser.add_subparsers(dest="job", required=True, metavar="JOB")
    history = jobs.add_parser(
        "history", help="commits, anomalies and incident blast radius as Parquet + report"
    )
    from pipeline.options import add_arguments

    add_arguments(history)
    history.add_argument("--master", help="Spark master (default: pipeline.master, local[*])")
    history.add_argument("--config", type=Path, help="YAML settings file")
    history.add_argument("--cluster", help="a cluster of --config to read with --source kafka")
    history.add_argument("--json", action="store_true", help="print the run's figures as JSON")
    history.add_argument(
        "--ranges-from-store",
        action="store_true",
        help="log ranges from the service's store (store.path): writes OUT/ranges.parquet, used as --ranges",
    )
    history.set_defaults(func=run_history)


def kafka_options(cluster: ClusterSettings) -> dict[str, str]:
    """Kafka source options for ``cluster``'s security settings."""
    out: dict[str, str] = {"kafka.security.protocol": cluster.security_protocol}
    if cluster.sasl is not None:
        module = (
            "org.apache.kafka.common.security.plain.PlainLoginModule"
            if cluster.sasl.mechanism == "PLAIN"
            else "org.apache.kafka.common.security.scram.ScramLoginModule"
        )
        password = cluster.sasl.password.get_secret_value().replace('"', '\\"')
        out["kafka.sasl.mechanism"] = cluster.sasl.mechanism
        out["kafka.sasl.jaas.config"] = (
            f'{module} required username="{cluster.sasl.username}" password="{password}";'
        )
    if cluster.tls is not None and cluster.tls.cafile is not None:
        out["kafka.ssl.truststore.type"] = "PEM"
        out["kafka.ssl.truststore.location"] = str(cluster.tls.cafile)
    return out


def _overrides(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    out: dict[str, Any] = {
        "archive": args.archive or settings.archive.directory,
        "snapshots": args.snapshots or settings.snapshots.directory,
        "analysis": analysis_settings(settings, args.incident_gap),
    }
    if args.cluster:
        cluster = settings.cluster(args.cluster)
        if cluster is None:
            raise ConfigError(f"no cluster named {args.cluster!r} in the configuration", field="cluster")
        out["bootstrap_servers"] = ",".join(cluster.bootstrap_servers)
        out["cluster"] = cluster.name
        out["kafka_options"] = {**kafka_options(cluster), **out.get("kafka_options", {})}
    return out


def analysis_settings(settings: Settings, incident_gap_seconds: float = 900.0) -> AnalysisSettings:
    """The pipeline's thresholds from the service's (``detection.*``): it judges as the online detectors."""
    from pipeline.options import AnalysisSettings

    detection = settings.detection
    return AnalysisSettings(
        recommit_window_seconds=detection.recommit_window_seconds,
        recent_commit_seconds=detection.recent_commit_seconds,
        incident_gap_seconds=incident_gap_seconds,
    )


def export_ranges(settings: Settings, out: Path, since: int | None, until: int | None) -> Path:
    """The store's log-range changes (within the job's time bounds) as ``out/ranges.parquet``."""
    from pipeline.ranges_file import write_ranges
    from store import Store

    if not settings.store.path.is_file():
        raise ConfigError(f"--ranges-from-store: no store at {settings.store.path}", field="store.path")
    with Store.open(settings.store) as store:
        rows = store.range_samples(
            since=None if since is None else since / 1000, until=None if until is None else until / 1000
        )
    path = out / "ranges.parquet"
    write_ranges(rows, path)
    return path


def run_history(args: argparse.Namespace) -> int:
    from pipeline.job import run_history as run
    from pipeline.options import options_from
    from pipeline.progress import Progress
    from pipeline.session import build_session, ensure_kafka_jars

    settings = load_settings(args.config)
    conf = settings.pipeline
    options = options_from(args, **_overrides(args, settings))
    if args.ranges_from_store:
        options = replace(options, ranges=export_ranges(settings, options.out, options.since, options.until))
    jars = ensure_kafka_jars(conf.kafka_jars) if options.source == "kafka" else None
    spark = build_session(
        master=args.master or conf.master,
        shuffle_partitions=conf.shuffle_partitions,
        ui=conf.ui,
        kafka_jars=jars,
        conf={"spark.driver.memory": conf.driver_memory},
    )
    spark.sparkContext.setLogLevel("ERROR")
    progress = Progress(spark.sparkContext, quiet=args.quiet)
    try:
        facts = run(spark, options, progress)
    finally:
        progress.close()
        spark.stop()
    if args.json:
        print(json.dumps(facts, indent=2, default=str))
    else:
        print(f"{facts['commits']} commits, {facts['anomalies']} anomalies, {facts['incidents']} incidents")
        print(f"tables and report in {options.out}")
    return 0
