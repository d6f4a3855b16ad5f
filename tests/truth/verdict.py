"""offsetguard's claims judged against the truth (:mod:`tests.truth.oracle`).

Three rules, per group-partition:

* **no claim above the truth**: every certain figure a finding states (messages re-read, skipped, deleted
  unread) is at most what really happened; an upper bound (``*_max``) is at least it;
* **no certain loss missed**: a group-partition that lost messages has a finding that says so (a loss
  figure above 0 on that group, or a truncation or deleted topic naming it);
* **no page without harm**: a critical finding about a group-partition of a consumption kind (re-read,
  skip, loss) stands on something that happened to its data; so does a warning, unless it gives bounds
  (``*_max`` above 0: "at most"), i.e. says which histories fit and that it cannot tell them apart. A
  direction asserted without evidence fails this or the first rule: it claims a re-read or a skip that did
  not happen.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.truth.oracle import PartitionTruth, Truth

PAGES = frozenset({"warning", "critical"})
# The kinds that claim something happened to a group's data (the rest state a condition: lag, risk, a
# committed offset beyond the log end, which is true whatever follows).
CONSUMPTION_KINDS = frozenset({"offset_rewind", "offset_skip", "offsets_lost", "topic_deleted"})


@dataclass(frozen=True)
class Claim:
    """One finding as offsetguard stored it (``magnitude``: summed over its occurrences)."""

    kind: str
    severity: str
    cause: str | None
    group: str | None
    topic: str | None
    partition: int | None
    magnitude: Mapping[str, Any]
    evidence: Mapping[str, Any] = field(default_factory=dict)

    def about(self, t: Truth) -> bool:
        """Whether this claim speaks of ``t``'s group-partition (a topic-wide or group-wide claim too)."""
        if self.group is not None and self.group != t.group:
            return False
        if self.topic is not None and self.topic != t.topic:
            return False
        return self.partition is None or self.partition == t.partition

    def short(self) -> str:
        return f"{self.kind}/{self.severity}/{self.cause} {self.group} {self.topic}[{self.partition}] " + str(
            dict(self.magnitude)
        )


def _num(m: Mapping[str, Any], name: str) -> int:
    value = m.get(name)
    return int(value) if isinstance(value, int | float) else 0


def problems(truth: Truth, claims: Iterable[Claim]) -> list[str]:
    """Every rule ``claims`` break about ``truth`` (empty: the account is within the truth)."""
    mine = [c for c in claims if c.about(truth)]
    where = f"{truth.group} {truth.topic}[{truth.partition}]"
    found: list[str] = []
    per_partition = [c for c in mine if c.group == truth.group and c.partition == truth.partition]
    replayed = sum(_num(c.magnitude, "messages_replayed") for c in per_partition)
    if replayed > truth.reread:
        found.append(f"{where}: claims {replayed} re-read, {truth.reread} were")
    skipped = sum(_num(c.magnitude, "messages_skipped") for c in per_partition if c.kind == "offset_skip")
    if skipped > truth.skipped + truth.lost:
        found.append(f"{where}: claims {skipped} never read, {truth.skipped} skipped + {truth.lost} lost")
    deleted = sum(_num(c.magnitude, "messages_deleted_unread") for c in per_partition)
    if deleted > truth.lost:
        found.append(f"{where}: claims {deleted} deleted unread, {truth.lost} were lost")
    for c in per_partition:
        bound = c.magnitude.get("messages_skipped_max")
        if isinstance(bound, int | float) and bound < truth.skipped:
            found.append(f"{where}: bound {c.short()} below the {truth.skipped} skipped")
    if truth.lost and not any(_reports_loss(c, truth) for c in mine):
        found.append(f"{where}: {truth.lost} lost, no finding says so: {[c.short() for c in mine]}")
    for c in mine:
        if c.kind not in CONSUMPTION_KINDS or c.group is None or not truth.clean:
            continue
        # a warning that says what it cannot know (bounds) may stand where nothing happened: one of the
        # histories it names did not; a critical, or a warning stated as fact, may not
        if c.severity == "critical" or (c.severity in PAGES and not _bounded(c)):
            found.append(f"{where}: pages {c.short()}, but nothing was lost, skipped or re-read")
    return found


def _bounded(c: Claim) -> bool:
    return any(name.endswith("_max") and value for name, value in c.magnitude.items())


def _reports_loss(c: Claim, t: Truth) -> bool:
    m = c.magnitude
    if c.kind == "committed_below_log_start":
        return _num(m, "messages_lost") > 0
    if c.kind in ("offset_skip", "offsets_lost", "topic_deleted"):
        return _num(m, "messages_deleted_unread") > 0 and c.group == t.group
    if c.kind == "log_truncation":
        return _num(m, "messages_truncated") > 0
    return False


def partition_problems(truth: PartitionTruth, claims: Iterable[Claim]) -> list[str]:
    """Topic-wide claims about one partition (no group) against what happened to its messages: a
    truncation never counts more than was cut from the end of the same topic, nor a deleted topic's."""
    where = f"{truth.topic}[{truth.partition}]"
    found = []
    for c in claims:
        if c.group is not None or c.topic != truth.topic or c.partition not in (None, truth.partition):
            continue
        if c.kind == "log_truncation" and c.partition == truth.partition:
            cut = _num(c.magnitude, "messages_truncated")
            if cut > truth.truncated:
                found.append(f"{where}: claims {cut} truncated, {truth.truncated} were ({c.short()})")
    return found
