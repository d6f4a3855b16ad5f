"""Reset plans: the offsets a group had committed at a moment, ready for Kafka's own tool.

``kafka-consumer-groups --reset-offsets --from-file F`` (ConsumerGroupCommand) reads every line of F as
``topic,partition,offset`` (with one ``--group``). A ``#`` comment line makes it fail, printing an error
yet exiting 0 (Kafka 4.1, tested in tests/service/api/test_reset_plan_integration.py); per its source, a
fourth column makes it read ``group,topic,partition,offset`` instead. So there are two renderings:

* ``kafka``: exactly those lines, to apply as is;
* ``annotated`` (the default, for people): the same rows with a ``warning`` column and ``#`` comments
  carrying the exact command line. Kafka refuses this one.

Offsets outside the partition's current log range are clamped into it (a committed offset below the log
start points at deleted records; one beyond the log end at records that no longer exist), and the row
says so. Pure: no store, no clock.
"""

from __future__ import annotations

import csv
import io
import json
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from collectors.settings import ClusterSettings
from service.api.times import rfc3339
from store import CommittedPoint, LatestPartition

PlanFormat = Literal["annotated", "kafka"]
PLAN_FILE = "reset-plan.csv"


@dataclass(frozen=True, slots=True)
class PlanRow:
    topic: str
    partition: int
    offset: int  # what the plan sets (clamped into the current log range)
    committed: int  # what the group had committed at the plan's time
    warning: str  # empty when the committed offset is applied unchanged


@dataclass(frozen=True, slots=True)
class ResetPlan:
    cluster: str
    group: str
    at: float
    rows: tuple[PlanRow, ...]
    left_out: tuple[tuple[str, int, int], ...]  # (topic, partition, offset now) not committed at ``at``
    command: tuple[str, ...]  # dry run, then execute

    @property
    def warnings(self) -> int:
        return sum(1 for r in self.rows if r.warning)


def clamp(committed: int, log_range: LatestPartition | None) -> tuple[int, str]:
    """``committed`` moved into the current log range, and why (empty: unchanged)."""
    if log_range is None or (log_range.log_start is None and log_range.log_end is None):
        return committed, "log range unknown: offset not checked"
    start, end = log_range.log_start, log_range.log_end
    if start is not None and committed < start:
        return start, f"clamped to log start {start}: records {committed}..{start - 1} were deleted"
    if end is not None and committed > end:
        return end, f"clamped to log end {end}: committed {committed} is beyond it (truncated or recreated)"
    return committed, ""


def build_plan(
    cluster: str,
    group: str,
    at: float,
    committed_then: Iterable[CommittedPoint],
    committed_now: Iterable[tuple[str, int, int]],
    log_range: Callable[[str, int], LatestPartition | None],
    settings: ClusterSettings | None,
) -> ResetPlan:
    rows = []
    for c in sorted(committed_then, key=lambda c: (c.topic, c.partition)):
        if c.offset is None:
            continue
        offset, warning = clamp(c.offset, log_range(c.topic, c.partition))
        rows.append(PlanRow(c.topic, c.partition, offset, c.offset, warning))
    planned = {(r.topic, r.partition) for r in rows}
    left_out = tuple(sorted(x for x in committed_now if (x[0], x[1]) not in planned))
    return ResetPlan(cluster, group, at, tuple(rows), left_out, command_lines(settings, group))


def shell_quote(text: str) -> str:
    """``text`` as one shell word; control characters use bash's ``$'...'`` so a line never breaks."""
    if text.isprintable():
        return shlex.quote(text)
    out = []
    for ch in text:
        if ch in "\\'":
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        else:
            code = ord(ch)
            out.append(
                f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
            )
    return "$'" + "".join(out) + "'"


def command_lines(settings: ClusterSettings | None, group: str, file: str = PLAN_FILE) -> tuple[str, ...]:
    bootstrap = ",".join(settings.bootstrap_servers) if settings else "<bootstrap-servers>"
    base = ["kafka-consumer-groups.sh", "--bootstrap-server", shlex.quote(bootstrap)]
    if settings is not None and settings.security_protocol != "PLAINTEXT":
        base += ["--command-config", "client.properties"]
    base += ["--group", shell_quote(group), "--reset-offsets", "--from-file", shlex.quote(file)]
    return (" ".join([*base, "--dry-run"]), " ".join([*base, "--execute"]))


def _csv(rows: Iterable[Sequence[object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerows(rows)
    return buffer.getvalue()


def render(plan: ResetPlan, fmt: PlanFormat) -> str:
    """The plan as CSV text: ``kafka`` (only ``topic,partition,offset`` lines) or ``annotated``."""
    if fmt == "kafka":
        return _csv((r.topic, r.partition, r.offset) for r in plan.rows)
    head = [
        f"offsetguard reset plan of group {json.dumps(plan.group, ensure_ascii=False)}"
        f" in cluster {json.dumps(plan.cluster, ensure_ascii=False)}",
        f"restores the offsets committed at {rfc3339(plan.at)} (epoch {plan.at:.3f});"
        f" {len(plan.rows)} partitions, {plan.warnings} with a warning",
        "Kafka's tool reads only topic,partition,offset lines: apply the format=kafka rendering of this plan",
        f"(offsetguard reset-plan ... --format kafka > {PLAN_FILE}). Stop the group's consumers first (the",
        "group must be Empty), preview with the first command, apply with the second:",
        *(f"  {line}" for line in plan.command),
    ]
    for topic, partition, now in plan.left_out:
        head.append(
            f"not in plan (nothing committed then, Kafka leaves it): {topic}-{partition} now at {now}"
        )
    head.append("topic,partition,offset,warning")
    comments = "".join(f"# {line}\n" for line in head)
    return comments + _csv((r.topic, r.partition, r.offset, r.warning) for r in plan.rows)
