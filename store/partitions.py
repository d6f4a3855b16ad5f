"""Change-only writes of partition log bounds and leadership, planned against cached latest values.

Offsets (log start/end) and metadata (leader, leader epoch) arrive from different collectors; each history
row holds the partition's whole state after the change, carrying the other source's fields forward.

``last_seen_at`` (the newest observation that listed the partition) is not rewritten for every unchanged
partition of every observation (20,000 row updates every 5 s at fleet size, every page of the table
dirtied each time). The writer remembers which partitions each source's latest observation listed and
when (:meth:`PartitionWriter.seen_at`, which readers apply over the stored value); a partition's time is
written to the database when it changes, when an observation of that source no longer lists it (the
time of the last one that did), and for all of them at :meth:`PartitionWriter.flush_seen` (the store's
close).

An offsets observation hands an unchanged partition's ``PartitionOffsets`` as the very object of the one
before (:mod:`collectors.offsets`), so its plan (every 5 s, 20,000 partitions at fleet size) looks only at
the objects that are new since the last offsets plan written for that cluster (found by identity, in C),
as long as nothing else changed those partitions' cached values meanwhile (a metadata write: then the
whole observation is walked, as the first one is).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import compress
from operator import is_not
from typing import cast

from collectors.model import ClusterMetadata, OffsetsObservation, PartitionOffsets
from store.db import Connection
from store.log_end_memory import LogEndMemory
from store.recent import NOTHING, Recent, RecentWrite
from store.records import WriteCounts

# (log_start, log_end, leader, leader_epoch); None = not known yet (or, for leader, offline)
State = tuple[int | None, int | None, int | None, int | None]
Key = tuple[str, str, int]  # (cluster, topic, partition)
# (topic, partition, log_start, log_end, leader, leader_epoch) where None means "keep the stored value"
Update = tuple[str, int, int | None, int | None, int | None, int | None]

_INSERT_LATEST = """
    INSERT INTO latest_partition_offsets
        (id, cluster, topic, partition, log_start, log_end, leader, leader_epoch, changed_at, last_seen_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
_UPDATE_LATEST = """
    UPDATE latest_partition_offsets
    SET log_start = ?, log_end = ?, leader = ?, leader_epoch = ?, changed_at = ?, last_seen_at = ?
    WHERE id = ?
"""
_TOUCH = "UPDATE latest_partition_offsets SET last_seen_at = {greatest} WHERE id = ?"
# Written to partition_offsets_recent when many, merged into partition_offsets_history (store.recent)
_HISTORY_COLUMNS = ("key_id", "observed_at", "log_start", "log_end", "leader", "leader_epoch")
# The newest stored history row's time of each key id asked, of the history's two tables (LogEndMemory
# takes a partition in after it)
_NEWEST = """
    SELECT CAST(k.value AS BIGINT), (
        SELECT max(t) FROM (
            SELECT max(h.observed_at) AS t FROM partition_offsets_history AS h
            WHERE h.key_id = CAST(k.value AS BIGINT)
            UNION ALL
            SELECT max(r.observed_at) FROM partition_offsets_recent AS r
            WHERE r.key_id = CAST(k.value AS BIGINT)
        ) AS both_tables
    ) FROM ({keys}) AS k
"""


@dataclass(slots=True)
class PartitionPlan:
    """The rows one observation writes, and the cache entries to apply once they are committed."""

    inserts: list[tuple[object, ...]] = field(default_factory=list)
    updates: list[tuple[object, ...]] = field(default_factory=list)
    history: list[tuple[object, ...]] = field(default_factory=list)
    touches: list[tuple[float, int]] = field(default_factory=list)  # (last seen at, id) no longer listed
    cache: list[tuple[Key, int, State]] = field(default_factory=list)
    seen: tuple[str, str, float, set[Key]] | None = None  # (cluster, source, at, keys listed)
    offsets: tuple[str, tuple[PartitionOffsets, ...]] | None = None  # an offsets plan's observation
    newest: dict[Key, float | None] = field(default_factory=dict)  # asked by write() for the log-end memory
    at: float = 0.0  # the observation's time
    recent: RecentWrite = NOTHING  # what its write did with the recent history rows (store.recent)


# An offsets plan written: (its observation's partitions, when they were observed, the keys they listed)
Written = tuple[tuple[PartitionOffsets, ...], float, set[Key]]


class PartitionWriter:
    """Plans and writes partition-state changes; callers serialise calls (the store's writer lock)."""

    def __init__(self, conn: Connection, version: int | None = None) -> None:
        self._conn = conn
        # the log-end rows written, for "when did the log end reach X" (the store reads it; ``version``:
        # the shared database's history change counter as of this load)
        self.log_ends = LogEndMemory(version)
        self._newest = _NEWEST.format(keys=conn.dialect.json_array_values("?"))
        self._touch = _TOUCH.format(greatest=conn.dialect.greatest("last_seen_at", "?"))
        self._recent = Recent(conn, "partition_offsets_history", "partition_offsets_recent", _HISTORY_COLUMNS)
        # (cluster, source) -> (observed_at, partitions listed) of the source's latest observation
        self._seen: dict[tuple[str, str], tuple[float, set[Key]]] = {}
        rows = conn.execute(
            "SELECT id, cluster, topic, partition, log_start, log_end, leader, leader_epoch"
            " FROM latest_partition_offsets"
        )
        intern = sys.intern  # SQLite hands out a copy of each name per row; the collectors intern theirs
        self._latest: dict[Key, tuple[int, State]] = {
            (intern(cluster), intern(topic), partition): (key_id, (log_start, log_end, leader, epoch))
            for key_id, cluster, topic, partition, log_start, log_end, leader, epoch in rows
        }
        [(top,)] = conn.execute("SELECT max(id) FROM latest_partition_offsets").fetchall()
        self._next_id = (top or 0) + 1
        # cluster -> the last offsets plan written, while no other write changed the cache of its cluster
        self._written: dict[str, Written] = {}

    def plan_offsets(self, obs: OffsetsObservation) -> PartitionPlan:
        """Plan ``obs``; its leader/epoch replace the stored ones only when set."""
        moved = self._moved(obs)
        if moved is not None:
            plan = self._plan(obs.cluster, obs.observed_at, _updates(moved), leader_known=False, source=None)
            plan.seen = (obs.cluster, "offsets", obs.observed_at, self._written[obs.cluster][2])
        else:
            updates = _updates(obs.partitions)
            plan = self._plan(obs.cluster, obs.observed_at, updates, leader_known=False, source="offsets")
        plan.offsets = (obs.cluster, obs.partitions)
        return plan

    def _moved(self, obs: OffsetsObservation) -> list[PartitionOffsets] | None:
        """The partitions of ``obs`` that are not the objects of the last offsets plan written, if ``obs``
        lists the same partitions in the same order, no earlier than it; None: walk all of them. The
        plan of the moved ones alone is then the whole plan: every other partition has the values it was
        planned (and cached) with, and is listed as before (no time to write for one no longer listed)."""
        written = self._written.get(obs.cluster)
        if written is None or len(written[0]) != len(obs.partitions) or obs.observed_at < written[1]:
            return None
        before = written[0]
        changed = list(map(is_not, obs.partitions, before))
        moved = list(compress(obs.partitions, changed))
        for new, old in zip(moved, compress(before, changed), strict=True):
            if new.partition != old.partition or new.topic != old.topic:
                return None  # not the same partitions in the same order
        return moved

    def plan_metadata(self, meta: ClusterMetadata) -> PartitionPlan:
        """Plan the leader and leader epoch of every partition in ``meta`` (None leader = offline)."""
        updates = ((p.topic, p.partition, None, None, p.leader, p.leader_epoch) for p in meta.partitions())
        return self._plan(meta.cluster, meta.observed_at, updates, leader_known=True, source="metadata")

    def _plan(
        self, cluster: str, at: float, updates: Iterable[Update], *, leader_known: bool, source: str | None
    ) -> PartitionPlan:
        """The rows ``updates`` write; with a ``source``, also the times of its partitions no longer
        listed, and what it lists (:meth:`seen_at`)."""
        plan = PartitionPlan(at=at)
        next_id = self._next_id
        planned: set[Key] = set()
        for topic, partition, log_start, log_end, leader, epoch in updates:
            key = (cluster, topic, partition)
            if key in planned:
                continue  # a duplicate in one observation: the first one wins
            planned.add(key)
            known = self._latest.get(key)
            old: State = known[1] if known else (None, None, None, None)
            new: State = (
                old[0] if log_start is None else log_start,
                old[1] if log_end is None else log_end,
                # Metadata says None for an offline partition; an offsets observation says None for "unknown".
                leader if leader_known or leader is not None else old[2],
                old[3] if epoch is None else epoch,
            )
            if known is None:
                key_id, next_id = next_id, next_id + 1
                plan.inserts.append((key_id, cluster, topic, partition, *new, at, at))
            elif new != old:
                key_id = known[0]
                plan.updates.append((*new, at, at, key_id))
            else:
                continue  # unchanged: seen_at answers for it
            plan.history.append((key_id, at, *new))
            plan.cache.append((key, key_id, new))
        if source is None:
            return plan
        last = self._seen.get((cluster, source))
        if last is not None and at >= last[0]:
            for key in last[1] - planned:  # listed last time, not now: write when it was last seen
                known = self._latest.get(key)
                if known is not None:
                    plan.touches.append((last[0], known[0]))
        if last is None or at >= last[0]:
            plan.seen = (cluster, source, at, planned)
        return plan

    def write(self, plan: PartitionPlan) -> WriteCounts:
        """Execute ``plan`` in the caller's open transaction."""
        self._ask_newest(plan)
        if plan.inserts:
            self._conn.executemany(_INSERT_LATEST, plan.inserts)
        if plan.updates:
            self._conn.executemany(_UPDATE_LATEST, plan.updates)
        plan.recent = self._recent.write(self._conn, plan.history, plan.at)
        if plan.touches:
            self._conn.executemany(self._touch, plan.touches)
        return WriteCounts(history_rows=len(plan.history), new_keys=len(plan.inserts))

    def _ask_newest(self, plan: PartitionPlan) -> None:
        """The newest stored row's time of the existing partitions ``plan`` writes a row for that the
        log-end memory has not taken in (once per partition and process: a warm start's first writes)."""
        if not plan.history:
            return
        inserted = {row[0] for row in plan.inserts}
        existing = [key for key, key_id, _ in plan.cache if key_id not in inserted]
        keys = self.log_ends.untracked(existing)
        if not keys:
            return
        ids = {self._latest[key][0]: key for key in keys}
        rows = self._conn.execute(self._newest, (json.dumps(list(ids)),)).fetchall()
        plan.newest = {ids[int(key_id)]: None if at is None else float(at) for key_id, at in rows}

    def apply(self, plan: PartitionPlan) -> None:
        """The transaction that wrote ``plan`` committed: make the cache agree with the database."""
        self._recent.written(plan.recent)
        if plan.history:
            inserted = {row[0] for row in plan.inserts}
            self.log_ends.add(
                (
                    (key, cast(float, row[1]), state[1], key_id in inserted)
                    for (key, key_id, state), row in zip(plan.cache, plan.history, strict=True)
                ),
                plan.newest,
            )
        for key, key_id, state in plan.cache:
            self._latest[key] = (key_id, state)
            self._next_id = max(self._next_id, key_id + 1)
        if plan.seen is not None:
            cluster, source, at, keys = plan.seen
            self._seen = {**self._seen, (cluster, source): (at, keys)}  # readers iterate it unlocked
        if plan.offsets is not None:
            cluster, partitions = plan.offsets
            if plan.seen is not None and len(plan.seen[3]) == len(partitions):  # none listed twice
                self._written[cluster] = (partitions, plan.seen[2], plan.seen[3])
            else:
                self._written.pop(cluster, None)
        elif plan.cache:  # another source changed cached values: the next offsets plan walks them all
            for cluster in {key[0] for key, _, _ in plan.cache}:
                self._written.pop(cluster, None)

    def abandon(self, plan: PartitionPlan) -> None:
        """The transaction writing ``plan`` failed (it may have committed all the same): the log-end
        memory forgets its partitions."""
        self.log_ends.forget(key for key, _, _ in plan.cache)

    def seen_at(self, cluster: str, topic: str, partition: int) -> float | None:
        """When the latest observation listing the partition was taken, if one of each source's latest
        did (the stored ``last_seen_at`` may be older)."""
        key = (cluster, topic, partition)
        times = [at for (c, _), (at, keys) in self._seen.items() if c == cluster and key in keys]
        return max(times) if times else None

    def flush_seen(self) -> None:
        """Write every remembered last-seen time, and merge the recent history rows (in the caller's open
        transaction: the store's close)."""
        touches = [
            (at, self._latest[key][0])
            for at, keys in self._seen.values()
            for key in keys
            if key in self._latest
        ]
        if touches:
            self._conn.executemany(self._touch, touches)
        self.merge_recent()

    def merge_recent(self) -> None:
        """Move the recent history rows into ``partition_offsets_history`` now (in the caller's open
        transaction; retention reads only that table)."""
        self._recent.merge(self._conn)


def _updates(partitions: Iterable[PartitionOffsets]) -> Iterable[Update]:
    return ((p.topic, p.partition, p.log_start, p.log_end, p.leader, p.leader_epoch) for p in partitions)
