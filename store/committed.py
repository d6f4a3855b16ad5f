"""Change-only writes of committed offsets, planned against an in-memory copy of the latest values.

The cache mirrors ``latest_committed`` so a 50,000-partition observation needs no read before its write:
only changed values reach the history table. It is updated only after the transaction commits, so a
failed write leaves cache and database in agreement.

``last_seen_at`` (the newest poll that fetched the group) is not rewritten for every partition of every
fetched group each poll (50,000 rows every 5 s at fleet size): the writer remembers which groups the
cluster's latest poll fetched, when, and which topics it could not see (:meth:`CommittedWriter.seen_at`,
applied by readers over the stored value). A group's time is written when a poll no longer fetches it or
the unseen topics change (the time of the last poll that did), and for every group at
:meth:`CommittedWriter.flush_seen` (the store's close).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from itertools import chain, groupby
from operator import attrgetter

from collectors.model import CommittedObservation, CommittedOffset
from store.db import Connection
from store.recent import NOTHING, Recent, RecentWrite
from store.records import WriteCounts

# (key id, committed offset or None when deleted, leader epoch)
Entry = tuple[int, int | None, int | None]
GroupKey = tuple[str, str]  # (cluster, group)
PartKey = tuple[str, int]  # (topic, partition)
# A poll: when, the groups it fetched, the topics it could not see (their offsets were not confirmed)
Fetched = tuple[float, frozenset[str], tuple[str, ...]]
# What an observation written last held: its offsets tuple, its groups, the topics it could not see, and
# the groups it fetched (see CommittedWriter.plan)
_Written = tuple[tuple[CommittedOffset, ...], tuple[str, ...], frozenset[str], frozenset[str]]

_GROUP = attrgetter("group")

_INSERT_LATEST = """
    INSERT INTO latest_committed (
        id, cluster, grp, topic, partition, committed_offset, leader_epoch, metadata, changed_at, last_seen_at
    )
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
_UPDATE_LATEST = """
    UPDATE latest_committed
    SET committed_offset = ?, leader_epoch = ?, metadata = ?, changed_at = ?, last_seen_at = ?
    WHERE id = ?
"""
# Every partition of a fetched group was confirmed by the poll: present and unchanged, changed (already
# stamped), or still absent. One statement per group instead of one per partition.
_TOUCH_GROUP = """
    UPDATE latest_committed SET last_seen_at = ?
    WHERE cluster = ? AND grp = ? AND last_seen_at < ?
"""
# Replacing: recording the same instant twice keeps the later value instead of failing the batch.
# Written to committed_recent when many, merged into committed_history about once a minute (store.recent).
_HISTORY_COLUMNS = ("key_id", "observed_at", "committed_offset", "leader_epoch", "metadata")


@dataclass(slots=True)
class CommittedPlan:
    """The rows one observation writes, and the cache entries to apply once they are committed."""

    inserts: list[tuple[object, ...]] = field(default_factory=list)
    updates: list[tuple[object, ...]] = field(default_factory=list)
    history: list[tuple[object, ...]] = field(default_factory=list)
    touches: list[tuple[object, ...]] = field(default_factory=list)
    touch_sql: str = _TOUCH_GROUP
    # per group, the entries to set in the cache (one dict per group: applied with one update each)
    cache: dict[GroupKey, dict[PartKey, Entry]] = field(default_factory=dict)
    next_id: int = 1  # the first key id not taken once this is written
    deletions: int = 0
    fetched: tuple[str, Fetched] | None = None  # the cluster's latest poll, once written
    # (cluster, unseen topics, each fetched group's offsets): what the cache holds once this is written
    slices: tuple[str, frozenset[str], dict[str, tuple[CommittedOffset, ...]]] | None = None
    written: tuple[str, _Written] | None = None  # the observation's contents, once written
    at: float = 0.0  # the observation's time
    recent: RecentWrite = NOTHING  # what its write did with the recent history rows (store.recent)


class CommittedWriter:
    """Plans and writes committed-offset changes; callers serialise calls (the store's writer lock).

    A plan is made without I/O, written inside the caller's transaction, and applied to the cache only
    after that transaction commits.
    """

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._recent = Recent(conn, "committed_history", "committed_recent", _HISTORY_COLUMNS)
        self._latest: dict[GroupKey, dict[PartKey, Entry]] = {}
        self._next_id = 1
        self._fetched: dict[str, Fetched] = {}  # cluster -> its latest poll
        # cluster -> (unseen topics, each fetched group's offsets) of the last poll written
        self._slices: dict[str, tuple[frozenset[str], dict[str, tuple[CommittedOffset, ...]]]] = {}
        self._written: dict[str, _Written] = {}  # cluster -> the last observation written
        self._load()

    def _load(self) -> None:
        """The latest committed offsets, read once at the start (on its path: one pass, no per-row max)."""
        rows = self._conn.execute(
            "SELECT id, cluster, grp, topic, partition, committed_offset, leader_epoch FROM latest_committed"
        )
        latest = self._latest
        intern = sys.intern  # SQLite hands out a copy of each name per row; the collectors intern theirs
        for key_id, cluster, group, topic, partition, offset, epoch in rows:
            parts = latest.get((cluster, group))
            if parts is None:
                parts = latest[(intern(cluster), intern(group))] = {}
            parts[(intern(topic), partition)] = (key_id, offset, epoch)
        [(top,)] = self._conn.execute("SELECT max(id) FROM latest_committed").fetchall()
        self._next_id = (top or 0) + 1

    def plan(self, obs: CommittedObservation) -> CommittedPlan:
        """Work out what ``obs`` changes against the cached latest values (no I/O)."""
        at = obs.observed_at
        plan = CommittedPlan(at=at)
        cluster = obs.cluster
        hidden = obs.unseen_topics()
        last = self._written.get(cluster)
        if last is not None and last[0] is obs.offsets and last[1] == obs.groups and last[2] == hidden:
            # The very offsets written last (the tail-fed committed offsets hand the same tuple while
            # nothing moved): no value changed and nothing was deleted; only the poll's time is news.
            self._plan_seen(plan, cluster, (at, last[3], tuple(sorted(hidden))))
            return plan
        runs = [(g, tuple(run)) for g, run in groupby(obs.offsets, _GROUP)]
        slices = dict(runs)
        fetched = frozenset(obs.groups).union(slices)
        same: set[str] = set()
        if len(slices) == len(runs):  # each group in one run (else planned whole, and not remembered)
            polled = {g: slices.get(g, ()) for g in obs.groups}
            same = self._unchanged(cluster, polled, hidden)
            plan.slices = (cluster, hidden, polled)
        offsets = obs.offsets if not same else chain.from_iterable(run for g, run in runs if g not in same)
        observed: dict[GroupKey, set[PartKey]] = {(cluster, g): set() for g in obs.groups if g not in same}
        next_id = self._next_id
        cache = plan.cache
        group, seen, latest = None, set[PartKey](), {}  # the offsets come grouped: look each group up once
        cached: dict[PartKey, Entry] = {}
        for c in offsets:
            if c.group != group:
                group = c.group
                gkey = (cluster, group)
                seen = observed.get(gkey) or observed.setdefault(gkey, set())
                latest = self._latest.get(gkey, {})
                cached = cache.get(gkey) or cache.setdefault(gkey, {})
            pkey = (c.topic, c.partition)
            if pkey in seen:
                continue  # a duplicate in one observation: the first one wins
            seen.add(pkey)
            entry = latest.get(pkey)
            if entry is None:
                key_id, next_id = next_id, next_id + 1
                plan.inserts.append(
                    (
                        key_id,
                        obs.cluster,
                        c.group,
                        c.topic,
                        c.partition,
                        c.offset,
                        c.leader_epoch,
                        c.metadata,
                        at,
                        at,
                    )
                )
            elif entry[1] != c.offset or entry[2] != c.leader_epoch:
                key_id = entry[0]
                plan.updates.append((c.offset, c.leader_epoch, c.metadata, at, at, key_id))
            else:
                continue
            plan.history.append((key_id, at, c.offset, c.leader_epoch, c.metadata))
            cached[pkey] = (key_id, c.offset, c.leader_epoch)
        plan.next_id = next_id
        # Only groups whose fetch succeeded are here: a failed fetch says nothing about deletions, and
        # neither does a topic the poll could not see (an ACL hides it: a ``topic`` failure).
        unseen = tuple(sorted(hidden))
        self._plan_seen(plan, cluster, (at, fetched, unseen))
        plan.written = (cluster, (obs.offsets, obs.groups, hidden, fetched))
        for gkey, seen in observed.items():
            parts = self._latest.get(gkey)
            if not parts or seen.issuperset(parts):
                continue  # the poll had every partition the cache holds of the group: nothing deleted
            for pkey, (key_id, offset, _epoch) in parts.items():
                if offset is not None and pkey not in seen and pkey[0] not in hidden:
                    plan.updates.append((None, None, "", at, at, key_id))
                    plan.history.append((key_id, at, None, None, ""))
                    cache.setdefault(gkey, {})[pkey] = (key_id, None, None)
                    plan.deletions += 1
        return plan

    def _unchanged(
        self, cluster: str, polled: dict[str, tuple[CommittedOffset, ...]], hidden: frozenset[str]
    ) -> set[str]:
        """The fetched groups whose offsets are what the last written poll of ``cluster`` fetched for them
        (equal tuples: the collector hands an idle group's decoded offsets on again, so most compare by
        identity, in C), with the same topics unseen. Planning them would change nothing: that write made
        the cache hold exactly those offsets for them, and deleted (or left unseen) every other one."""
        last = self._slices.get(cluster)
        if last is None or last[0] != hidden:
            return set()
        written = last[1]
        return {g for g, offsets in polled.items() if g in written and offsets == written[g]}

    def _plan_seen(self, plan: CommittedPlan, cluster: str, now: Fetched) -> None:
        """Write the last-seen time of the groups the previous poll fetched and this one does not (all of
        them if the unseen topics changed), and remember this poll; an older poll changes nothing."""
        last = self._fetched.get(cluster)
        if last is not None and now[0] < last[0]:
            return
        if last is not None:
            at, groups, unseen = last
            gone = groups if unseen != now[2] else groups - now[1]
            plan.touch_sql = _touch_sql(unseen)
            plan.touches.extend((at, cluster, g, at, *unseen) for g in sorted(gone))
        plan.fetched = (cluster, now)

    def seen_at(self, cluster: str, group: str, topic: str) -> float | None:
        """When the cluster's latest poll was taken, if it fetched ``group`` and could see ``topic`` (the
        stored ``last_seen_at`` may be older)."""
        last = self._fetched.get(cluster)
        if last is None or group not in last[1] or topic in last[2]:
            return None
        return last[0]

    def flush_seen(self) -> None:
        """Write every remembered last-seen time, and merge the recent history rows (in the caller's open
        transaction: the store's close)."""
        for cluster, (at, groups, unseen) in self._fetched.items():
            self._conn.executemany(
                _touch_sql(unseen), [(at, cluster, g, at, *unseen) for g in sorted(groups)]
            )
        self.merge_recent()

    def merge_recent(self) -> None:
        """Move the recent history rows into ``committed_history`` now (in the caller's open transaction;
        retention reads only that table). The next due merge finds fewer rows or none: no harm done."""
        self._recent.merge(self._conn)

    def write(self, plan: CommittedPlan) -> WriteCounts:
        """Execute ``plan`` in the caller's open transaction."""
        if plan.inserts:
            self._conn.executemany(_INSERT_LATEST, plan.inserts)
        if plan.updates:
            self._conn.executemany(_UPDATE_LATEST, plan.updates)
        plan.recent = self._recent.write(self._conn, plan.history, plan.at)
        if plan.touches:
            self._conn.executemany(plan.touch_sql, plan.touches)
        return WriteCounts(
            history_rows=len(plan.history), new_keys=len(plan.inserts), deletions=plan.deletions
        )

    def apply(self, plan: CommittedPlan) -> None:
        """The transaction that wrote ``plan`` committed: make the cache agree with the database."""
        self._recent.written(plan.recent)
        latest = self._latest
        for gkey, entries in plan.cache.items():
            if entries:
                parts = latest.get(gkey)
                if parts is None:
                    latest[gkey] = dict(entries)
                else:
                    parts.update(entries)
        self._next_id = max(self._next_id, plan.next_id)
        if plan.slices is not None:
            cluster, hidden, slices = plan.slices
            self._slices[cluster] = (hidden, slices)
        if plan.fetched is not None:
            cluster, fetched = plan.fetched
            self._fetched = {**self._fetched, cluster: fetched}  # readers look it up unlocked
        if plan.written is not None:
            self._written[plan.written[0]] = plan.written[1]


def _touch_sql(unseen: tuple[str, ...]) -> str:
    """:data:`_TOUCH_GROUP`, leaving the rows of the ``unseen`` topics alone (their offsets were not
    confirmed: an ACL hides the topic)."""
    if not unseen:
        return _TOUCH_GROUP
    return f"{_TOUCH_GROUP.rstrip()} AND topic NOT IN ({','.join('?' * len(unseen))})"
