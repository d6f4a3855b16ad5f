"""The truth of a scenario, from what was acknowledged, what each group read and what the log holds now.

Per group-partition (a group and a partition of a topic, by name, whatever incarnation of the topic a
message was written to), over the messages *in scope* for that group (acknowledged at or after the
position it started from, :attr:`Truth.scope`):

* ``reread``: reads of a payload the group had already read (at-least-once duplicates included);
* ``lost``: messages the group never read that the log no longer holds (retention, ``delete-records``,
  truncation, the topic deleted) — gone before the group read them;
* ``skipped``: messages the group never read that the log still holds, below the offset the group has
  now committed: the group moved past them and will not read them;
* ``pending``: never read, still held, at or past the committed offset: it may read them yet.

A message is known by its payload id (the producer writes a unique one), never by its offset: after a
truncation or a re-created topic the same offset holds another message.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from tests.truth.records import Acked, Read

Partition = tuple[str, int]  # (topic, partition)


@dataclass(frozen=True)
class Truth:
    """What really happened to one group on one partition."""

    group: str
    topic: str
    partition: int
    read: int  # distinct payloads the group read
    reread: int
    lost: int
    skipped: int
    pending: int
    scope: int  # messages in scope: acknowledged at or after the group's start

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.group, self.topic, self.partition)

    @property
    def clean(self) -> bool:
        """Nothing lost, skipped or read twice."""
        return not (self.lost or self.skipped or self.reread)


def truths(
    acked: Iterable[Acked],
    reads: Iterable[Read],
    held: Iterable[str],
    committed: Mapping[tuple[str, str, int], int | None],
    starts: Mapping[tuple[str, str, int], float],
    ends: Mapping[tuple[str, str, int], float] | None = None,
) -> dict[tuple[str, str, int], Truth]:
    """The truth of every group-partition in ``starts``.

    ``held``: the payloads the log holds now (read back from every partition at the end of the scenario).
    ``committed``: each group-partition's committed offset now (None: none), in the current incarnation.
    ``starts``: when each group-partition began to be in scope (messages acknowledged before it are out
    of scope: a group that starts at the log end never meant to read what came before).
    ``ends``: when a group-partition stopped being in scope (the group deleted: what came after is no
    longer its to read); none: in scope to the end.
    """
    held_set = set(held)
    by_partition: dict[Partition, list[Acked]] = defaultdict(list)
    for a in acked:
        by_partition[(a.topic, a.partition)].append(a)
    reads_of: dict[tuple[str, str, int], list[Read]] = defaultdict(list)
    for r in reads:
        reads_of[(r.group, r.topic, r.partition)].append(r)
    latest_incarnation = {p: _latest_id(msgs) for p, msgs in by_partition.items()}

    out = {}
    for key, start in starts.items():
        group, topic, partition = key
        end = (ends or {}).get(key, float("inf"))
        msgs = [a for a in by_partition.get((topic, partition), ()) if start <= a.at < end]
        counts = Counter(r.payload for r in reads_of.get(key, ()))
        # every read of a payload this group read on any partition counts (a payload moves with nothing)
        read_payloads = set(counts)
        reread = sum(n - 1 for n in counts.values())
        lost = skipped = pending = 0
        tip = committed.get(key)
        current = latest_incarnation.get((topic, partition))
        for a in msgs:
            if a.payload in read_payloads:
                continue
            if a.payload not in held_set:
                lost += 1
            elif tip is not None and a.topic_id == current and a.offset < tip:
                skipped += 1
            else:
                pending += 1
        out[key] = Truth(
            group, topic, partition, len(read_payloads), reread, lost, skipped, pending, len(msgs)
        )
    return out


def _latest_id(msgs: list[Acked]) -> str | None:
    return max(msgs, key=lambda a: a.at).topic_id if msgs else None


@dataclass(frozen=True)
class PartitionTruth:
    """What happened to one partition's acknowledged messages, whoever read them.

    ``truncated``: messages of the topic's current incarnation the log no longer holds above its log start
    (cut from the end: an unclean election); ``deleted``: messages of an incarnation that no longer exists
    (the topic deleted, or deleted and re-created). Retention and ``delete-records`` remove from the start:
    neither.
    """

    topic: str
    partition: int
    truncated: int
    deleted: int


def partition_truths(
    acked: Iterable[Acked], held: Iterable[str], current_ids: Mapping[str, str | None]
) -> dict[Partition, PartitionTruth]:
    """``current_ids``: each topic's id now (None: the topic does not exist)."""
    held_set = set(held)
    by_partition: dict[Partition, list[Acked]] = defaultdict(list)
    for a in acked:
        by_partition[(a.topic, a.partition)].append(a)
    out = {}
    for (topic, partition), msgs in by_partition.items():
        now = current_ids.get(topic)
        current = [a for a in msgs if now is not None and a.topic_id == now]
        deleted = sum(1 for a in msgs if a not in current and a.payload not in held_set)
        kept = [a.offset for a in current if a.payload in held_set]
        start = min(kept) if kept else None
        truncated = sum(
            1 for a in current if a.payload not in held_set and start is not None and a.offset >= start
        )
        out[(topic, partition)] = PartitionTruth(topic, partition, truncated, deleted)
    return out
