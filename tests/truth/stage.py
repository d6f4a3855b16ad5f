"""One cell of the truth matrix on the shared sandbox: its own topics and groups, the real clients that
read them (each journaling what it processed), what was acknowledged, and at the end the truth beside what
offsetguard claimed about those groups and topics.

Cells run side by side on one cluster and one runtime; each names its topics and groups after itself, so
no cell sees another's data.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kafka.errors as kerr

from alerts.state import CommitKey
from sandbox.cluster import SandboxCluster
from store.alert_records import Alert
from tests.e2e.harness import RuntimeThread, retrying, wait_for
from tests.truth import ops
from tests.truth.clients import Member, start_member
from tests.truth.logread import held_payloads
from tests.truth.oracle import Truth, partition_truths, truths
from tests.truth.producer import produce, topic_id
from tests.truth.records import Acked, Journal, Read
from tests.truth.verdict import Claim, partition_problems, problems

Key = tuple[str, str, int]  # (group, topic, partition)


@dataclass(frozen=True)
class CellOutcome:
    """What the consumers did and what offsetguard said, for one cell."""

    cell: str
    truths: tuple[Truth, ...]
    claims: tuple[Claim, ...]
    problems: tuple[str, ...]
    notes: tuple[str, ...] = ()

    def row(self) -> dict[str, Any]:
        return {
            "cell": self.cell,
            "truth": [
                {
                    "group_partition": f"{t.group} {t.topic}[{t.partition}]",
                    "read": t.read,
                    "reread": t.reread,
                    "skipped": t.skipped,
                    "lost": t.lost,
                    "pending": t.pending,
                }
                for t in self.truths
            ],
            "claims": [
                {
                    "kind": c.kind,
                    "severity": c.severity,
                    "cause": c.cause,
                    "group": c.group,
                    "topic": c.topic,
                    "partition": c.partition,
                    "magnitude": dict(c.magnitude),
                    "evidence": {k: v for k, v in c.evidence.items() if _plain(v)},
                }
                for c in self.claims
            ],
            "problems": list(self.problems),
            "notes": list(self.notes),
        }


def _plain(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool | list | tuple)


@dataclass
class Stage:
    """The cell's handle on the cluster, the runtime and its journals."""

    kafka: SandboxCluster
    runtime: RuntimeThread
    root: Path
    cell: str
    suffix: str = field(default_factory=lambda: uuid.uuid4().hex[:6])
    acked: list[Acked] = field(default_factory=list)
    members: list[Member] = field(default_factory=list)
    scopes: dict[Key, float] = field(default_factory=dict)
    topics: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self._journal = Journal(self.root / f"{self.cell}-acked.jsonl")
        self._produced = 0

    # ------------------------------------------------------------------ setting the scene

    def name(self, what: str) -> str:
        return f"truth-{self.cell}-{what}-{self.suffix}"

    def create_topic(
        self,
        topic: str,
        partitions: int = 1,
        *,
        assignment: dict[int, list[int]] | None = None,
        configs: dict[str, str] | None = None,
        tool: bool = False,
    ) -> str:
        """The cell's topic, by the request ``kafka-topics --create`` sends (``tool``: by the tool itself,
        when an operator's creating it is the scene: a JVM started, seconds of CPU)."""
        replication = 1 if assignment is None else len(next(iter(assignment.values())))
        create = ops.create_topic if tool else ops.create_topic_request
        create(self.kafka, topic, partitions, replication, configs or {}, assignment)
        self.topics.add(topic)
        return topic

    def produce(self, topic: str, count: int, *, partition: int = 0, acks: int | str = "all") -> list[Acked]:
        done = produce(
            self.kafka.bootstrap_servers,
            topic,
            count,
            self._journal,
            partition=partition,
            prefix=f"{self.cell}-{self.suffix}-{self._produced}",
            acks=acks,
        )
        self._produced += count
        self.acked.extend(done)
        return done

    def member(
        self,
        client: str,
        group: str,
        topics: Sequence[str],
        *,
        reset: str = "earliest",
        mode: str = "subscribe",
        partitions: Sequence[int] | None = None,
        allow_auto_create: bool = False,
        extra: dict[str, Any] | None = None,
    ) -> Member:
        out = self.root / f"{self.cell}-{group}-{len(self.members)}.jsonl"
        m = start_member(
            client,
            self.kafka.bootstrap_servers,
            group,
            list(topics),
            out,
            reset=reset,
            mode=mode,
            partitions=list(partitions) if partitions is not None else None,
            allow_auto_create=allow_auto_create,
            extra=extra,
            cluster=self.kafka,
        )
        self.members.append(m)
        return m

    def watch(self, group: str, topic: str, partitions: Iterable[int] = (0,), since: float = 0.0) -> None:
        """Judge ``group`` on these partitions, over the messages acknowledged from ``since`` on."""
        for p in partitions:
            self.scopes[(group, topic, p)] = since

    def note(self, text: str) -> None:
        self.notes.append(text)

    # ------------------------------------------------------------------ the end: truth and claims

    def abandon(self) -> None:
        """Stop every member (a cell that failed or cannot apply)."""
        for m in self.members:
            if m.alive():
                m.kill()
        self._journal.close()

    def finish(self) -> CellOutcome:
        """Stop every member, let offsetguard see the last commits, and judge its claims."""
        for m in self.members:
            if m.alive():
                m.stop()
        self._journal.close()
        committed = self._committed()
        self._settle(committed)
        reads: list[Read] = [r for m in self.members for r in m.reads()]
        held = self._held()
        found = truths(self.acked, reads, held, committed, self.scopes)
        ids = {t: self._topic_id(t) for t in self.topics}
        cut = partition_truths(self.acked, held, ids)
        claims = tuple(self._claims())
        judged = [p for t in found.values() for p in problems(t, claims)]
        judged += [p for t in cut.values() for p in partition_problems(t, claims)]
        return CellOutcome(self.cell, tuple(found.values()), claims, tuple(judged), tuple(self.notes))

    def _topic_id(self, topic: str) -> str | None:
        """The topic's id now; None when it does not exist."""
        try:
            return topic_id(self.kafka.bootstrap_servers, topic)
        except kerr.KafkaError:
            return None

    def _committed(self) -> dict[Key, int | None]:
        out: dict[Key, int | None] = {}
        for group in {k[0] for k in self.scopes}:
            offsets = retrying(lambda g=group: ops.committed_offsets(self.kafka, g), 60)
            for key in [k for k in self.scopes if k[0] == group]:
                out[key] = offsets.get((key[1], key[2]))
        return out

    def _settle(self, committed: dict[Key, int | None]) -> None:
        """Until offsetguard's detection holds the final commits, and then has finished one more evaluation:
        held findings come out on the evaluation after the one that took the last commits in. (Its state is
        replaced at the end of each evaluation, one at a time: a state other than the one that held the
        commits is that of an evaluation started after it, on newer observations.)"""
        detections = self.runtime.runtime.detections

        def seen() -> bool:
            for (g, t, p), offset in committed.items():
                points = [d.state.commits.get(CommitKey(g, t, p)) for d in detections]
                got = next((x.offset for x in points if x is not None), None)
                if got != offset:
                    return False
            return True

        wait_for(seen, 90, f"{self.cell}: offsetguard sees the final commits {committed}")
        states = [d.state for d in detections]
        wait_for(
            lambda: all(d.state is not s for d, s in zip(detections, states, strict=True)),
            60,
            f"{self.cell}: an evaluation after the one that saw the final commits",
        )

    def _held(self) -> list[str]:
        """Every payload the cell's topics hold now, read back from the log start."""
        try:
            return held_payloads(self.kafka, self.topics)
        except kerr.KafkaError as exc:
            self.note(f"reading back the log: {exc!r}")
            return []

    def _claims(self) -> Iterable[Claim]:
        alerts: dict[str, Alert] = {}
        for group in {k[0] for k in self.scopes}:
            alerts.update((a.id, a) for a in self.runtime.list_alerts(group=group))
        for topic in self.topics:
            alerts.update((a.id, a) for a in self.runtime.list_alerts(topic=topic) if a.group is None)
        for a in sorted(alerts.values(), key=lambda a: a.started_at):
            if a.kind == "collector_failure":
                continue
            yield Claim(
                a.kind,
                a.severity,
                a.cause,
                a.group,
                a.topic,
                a.partition,
                dict(a.magnitude_total),
                a.evidence,
            )
