"""report.md, report.json and one PNG timeline per top incident, from the tables the job wrote.

Only small results reach the driver: the incident summary (top ``top`` rows) and, per top incident, the
commits of its affected group-partitions around its time span (at most ``MAX_POINTS`` each).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, never a display

import matplotlib.pyplot as plt
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipeline.blast import incident_summary

MAX_PARTITIONS_PLOTTED = 8
MAX_POINTS = 5000
MARGIN = timedelta(minutes=10)


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def top_incidents(blast: DataFrame, top: int) -> list[dict[str, Any]]:
    """The ``top`` worst incidents (most messages affected) as JSON-ready dicts, with their partitions."""
    rows = [r.asDict() for r in incident_summary(blast).limit(top).collect()]
    if not rows:
        return []
    ids = [r["incident_id"] for r in rows]
    parts: dict[str, list[dict[str, Any]]] = {}
    for p in blast.where(F.col("incident_id").isin(ids)).orderBy("topic", "partition").collect():
        d = p.asDict()
        parts.setdefault(d["incident_id"], []).append(
            {k: _jsonable(d[k]) for k in d if k not in ("incident_id", "cluster", "group")}
        )
    return [
        {**{k: _jsonable(v) for k, v in r.items()}, "partitions_affected": parts.get(r["incident_id"], [])}
        for r in rows
    ]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:120]


def _points(
    incidents: list[dict[str, Any]], table: DataFrame, time_col: str, columns: list[str]
) -> dict[tuple[Any, ...], list[Any]]:
    """Rows of ``table`` for every incident's plotted group-partitions within its time span (+ margin),
    in one query: (cluster, group, topic, partition) -> rows in log order."""
    spans = []
    for i in incidents:
        first = datetime.fromisoformat(i["first_commit_time"].replace("Z", "+00:00")) - MARGIN
        last = datetime.fromisoformat(i["last_commit_time"].replace("Z", "+00:00")) + MARGIN
        for p in i["partitions_affected"][:MAX_PARTITIONS_PLOTTED]:
            spans.append((i["cluster"], i["group"], p["topic"], p["partition"], first, last))
    if not spans:
        return {}
    wanted = table.sparkSession.createDataFrame(
        spans, "cluster string, group string, topic string, partition int, _lo timestamp, _hi timestamp"
    )
    t = F.col(time_col) if time_col == "commit_time" else F.timestamp_millis(time_col)
    # The same spans as literals first: Parquet skips the row groups (and Spark the rows) outside every
    # span and group before the join sees them (the commits table is in archive order, roughly by time).
    in_span = F.lit(False)
    for lo, hi in sorted({(lo, hi) for *_, lo, hi in spans}):
        lit_lo, lit_hi = _literal(lo, time_col), _literal(hi, time_col)
        in_span = in_span | ((F.col(time_col) >= lit_lo) & (F.col(time_col) <= lit_hi))
    groups = sorted({group for _, group, *_ in spans})
    rows = (
        table.where(in_span & F.col("group").isin(groups))
        .join(F.broadcast(wanted), ["cluster", "group", "topic", "partition"])
        .where((t >= F.col("_lo")) & (t <= F.col("_hi")))
        .select("cluster", "group", "topic", "partition", *columns)
        .orderBy("source_partition", "source_offset")
        .collect()
    )
    out: dict[tuple[Any, ...], list[Any]] = {}
    for r in rows:
        out.setdefault((r.cluster, r.group, r.topic, r.partition), []).append(r)
    return out


def _literal(at: datetime, time_col: str) -> Column:
    """``at`` as a literal of ``time_col``'s type (a timestamp, or epoch ms for ``at``)."""
    if time_col == "commit_time":
        return F.lit(at)
    return F.lit(int(at.timestamp() * 1000))


def plot_incident(
    incident: dict[str, Any],
    commits: dict[tuple[Any, ...], list[Any]],
    marks: dict[tuple[Any, ...], list[Any]],
    path: Path,
) -> None:
    """Committed offset against time for the incident's group-partitions; anomalies marked in red."""
    keys = [(p["topic"], p["partition"]) for p in incident["partitions_affected"]][:MAX_PARTITIONS_PLOTTED]
    fig, ax = plt.subplots(figsize=(10, 5), dpi=100)
    for topic, partition in keys:
        key = (incident["cluster"], incident["group"], topic, partition)
        points = [p for p in commits.get(key, []) if not p.tombstone][:MAX_POINTS]
        ax.step(
            [p.commit_time for p in points],
            [p.offset for p in points],
            where="post",
            label=f"{topic}[{partition}]",
        )
        for m in marks.get(key, []):
            at = datetime.fromtimestamp(m.at / 1000, tz=UTC)
            y = m.new_offset if m.new_offset is not None else m.old_offset
            ax.plot([at], [y], marker="v", color="red", markersize=9)  # type: ignore[arg-type]
            ax.annotate(m.kind, (at, y), textcoords="offset points", xytext=(4, 6), fontsize=7, color="red")
    ax.set_title(f"{incident['group']} — {incident['incident_id']}", fontsize=9)
    ax.set_xlabel("commit time (UTC)")
    ax.set_ylabel("committed offset")
    ax.legend(fontsize=7, loc="best")
    fig.autofmt_xdate()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def write_report(
    out: Path,
    blast: DataFrame,
    commits: DataFrame,
    anomalies: DataFrame,
    *,
    top: int,
    facts: dict[str, Any],
) -> dict[str, Any]:
    """Write report.json, report.md and ``timelines/*.png`` under ``out``; returns the report dict."""
    worst = top_incidents(blast, top)
    timelines = out / "timelines"
    timelines.mkdir(parents=True, exist_ok=True)
    points = _points(
        worst,
        commits,
        "commit_time",
        ["commit_time", "offset", "tombstone", "source_partition", "source_offset"],
    )
    marks = _points(
        worst,
        anomalies,
        "at",
        ["at", "kind", "old_offset", "new_offset", "source_partition", "source_offset"],
    )
    for rank, incident in enumerate(worst, 1):
        name = f"{rank:02d}-{_slug(incident['group'])}.png"
        plot_incident(incident, points, marks, timelines / name)
        incident["timeline"] = f"timelines/{name}"
    by_kind = {r["kind"]: r["count"] for r in anomalies.groupBy("kind").count().collect()}
    report = {**facts, "anomalies_by_kind": dict(sorted(by_kind.items())), "top_incidents": worst}
    (out / "report.json").write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
    (out / "report.md").write_text(markdown(report), encoding="utf-8")
    return report


FACTS = (
    "source",
    "since",
    "until",
    "records",
    "undecodable_records",
    "commits",
    "anomalies",
    "incidents",
    "wall_seconds",
)


def markdown(report: dict[str, Any]) -> str:
    """report.md: the run's facts, anomalies by kind, and the worst incidents with their timelines."""
    lines = ["# Offset-commit history report", ""]
    for key in FACTS:
        if key in report:
            lines.append(f"- **{key}**: {report[key]}")
    lines += ["", "## Anomalies by kind", ""]
    lines += [f"- {kind}: {n}" for kind, n in report["anomalies_by_kind"].items()] or ["- none"]
    lines += ["", "## Worst incidents", ""]
    if not report["top_incidents"]:
        lines.append("No incident in this history.")
    else:
        lines.append(
            "| # | incident | partitions | replayed | skipped | offsets lost | messages lost | kinds |"
        )
        lines.append("|---|---|---|---|---|---|---|---|")
        for rank, i in enumerate(report["top_incidents"], 1):
            lines.append(
                f"| {rank} | `{i['incident_id']}` | {i['partitions']} | {i['messages_replayed']} | "
                f"{i['messages_skipped']} | {i['offsets_lost']} | {i['messages_lost']} | "
                f"{', '.join(i['kinds'])} |"
            )
        for rank, i in enumerate(report["top_incidents"], 1):
            lines += ["", f"### {rank}. {i['group']} ({i['cluster']})", ""]
            lines.append(f"{i['first_commit_time']} → {i['last_commit_time']}, {i['anomalies']} anomalies.")
            lines.append("")
            lines.append(f"![timeline]({i['timeline']})")
    return "\n".join(lines) + "\n"
