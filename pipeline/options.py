"""Options of the ``history`` job and their command-line arguments (no Spark import: the CLI builds its
parser from these whether or not PySpark is installed)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pipeline.errors import PipelineError

Source = Literal["archive", "snapshots", "kafka"]


@dataclass(frozen=True)
class AnalysisSettings:
    """Thresholds, the same meaning as in :class:`alerts.thresholds.Thresholds`."""

    recommit_window_seconds: float = 30.0
    recent_commit_seconds: float = 600.0
    incident_gap_seconds: float = 900.0  # anomalies of one group closer than this are one incident


@dataclass(frozen=True)
class HistoryOptions:
    """What one run reads and writes."""

    source: Source
    out: Path
    archive: Path | None = None
    snapshots: Path | None = None
    bootstrap_servers: str | None = None
    cluster: str = "kafka"
    kafka_options: dict[str, str] = field(default_factory=dict)
    ranges: Path | None = None
    since: int | None = None  # epoch ms
    until: int | None = None
    top: int = 10
    records: bool = False  # also write the ``records`` table (every record type, fully decoded)
    report: bool = True
    analysis: AnalysisSettings = field(default_factory=AnalysisSettings)


def parse_time(text: str) -> int:
    """Epoch ms from ISO-8601 (``2026-11-01``, ``2026-11-01T12:00:00Z``) or a number of ms."""
    if text.isdigit():
        return int(text)
    try:
        at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO-8601 time or epoch ms") from exc
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return int(at.timestamp() * 1000)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The job's arguments (shared by the CLI sub-command and spark-submit)."""
    parser.add_argument("--source", choices=["archive", "snapshots", "kafka"], required=True)
    parser.add_argument("--out", type=Path, required=True, help="output directory (tables + report)")
    parser.add_argument("--archive", type=Path, help="archive directory (--source archive)")
    parser.add_argument("--snapshots", type=Path, help="snapshot directory (--source snapshots)")
    parser.add_argument("--bootstrap", help="bootstrap servers (--source kafka)")
    parser.add_argument("--cluster-name", default="kafka", help="cluster name recorded for --bootstrap")
    parser.add_argument(
        "--kafka-option", action="append", default=[], metavar="K=V", help="kafka.* source option"
    )
    parser.add_argument("--ranges", type=Path, help="log-range samples (Parquet or JSON lines) for skips")
    parser.add_argument("--since", type=parse_time, help="ISO-8601 time or epoch ms (inclusive)")
    parser.add_argument("--until", type=parse_time, help="ISO-8601 time or epoch ms (exclusive)")
    parser.add_argument("--top", type=int, default=10, help="incidents in the report (default 10)")
    parser.add_argument("--records", action="store_true", help="also write every decoded record")
    parser.add_argument("--incident-gap", type=float, default=900.0, help="seconds between incidents")
    parser.add_argument("--quiet", action="store_true", help="phases only, no task progress")


def options_from(args: argparse.Namespace, **overrides: Any) -> HistoryOptions:
    kafka_options = {}
    for item in args.kafka_option:
        key, sep, value = item.partition("=")
        if not sep:
            raise PipelineError(f"--kafka-option {item!r} is not KEY=VALUE")
        kafka_options[key if key.startswith("kafka.") else f"kafka.{key}"] = value
    values: dict[str, Any] = {
        "source": args.source,
        "out": args.out,
        "archive": args.archive,
        "snapshots": args.snapshots,
        "bootstrap_servers": args.bootstrap,
        "cluster": args.cluster_name,
        "kafka_options": kafka_options,
        "ranges": args.ranges,
        "since": args.since,
        "until": args.until,
        "top": args.top,
        "records": args.records,
        "analysis": AnalysisSettings(incident_gap_seconds=args.incident_gap),
    }
    values.update({k: v for k, v in overrides.items() if v is not None})
    return HistoryOptions(**values)
