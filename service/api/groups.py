"""Consumer groups as the API shows them, from the store (offsets, log ranges, history) and the latest
groups poll (state, members). Blocking, but short: indexed reads of the store's WAL reader connections.

Lag in seconds follows :mod:`service.metrics.view`: the age of the oldest unconsumed message, a lower
bound, absent when the history cannot tell.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from collectors.model import CommittedObservation, GroupInfo, GroupsObservation
from collectors.scope import EVERYTHING, Scope
from service.api.errors import NotFound
from service.api.schemas.groups import (
    AlertBrief,
    CommittedPointOut,
    GroupDetail,
    GroupHistory,
    GroupList,
    GroupSummary,
    LagSummary,
    LogPointOut,
    MemberOut,
    OffsetAt,
    OffsetsAt,
    PartitionHistory,
    PartitionState,
    TopicPartitionRef,
)
from service.metrics.view import assignments, lag_seconds, wanted_offsets
from store import LatestCommitted, LatestPartition, PartitionPoint, Store
from store.alert_records import Alert

SEVERITY_RANK = {"critical": 3, "warning": 2, "info": 1}


class _GroupIndex:
    """Group id -> info of each cluster's newest groups observation, built once per observation rather
    than once per request (a linear search of 10,000 groups cost more than a group detail's reads)."""

    def __init__(self) -> None:
        self._latest: dict[str, tuple[GroupsObservation, dict[str, GroupInfo]]] = {}

    def find(self, groups: GroupsObservation, group: str) -> GroupInfo | None:
        last = self._latest.get(groups.cluster)  # one read: another thread may store a newer one meanwhile
        if last is None or last[0] is not groups:
            index: dict[str, GroupInfo] = {}
            for g in groups.groups:
                index.setdefault(g.group_id, g)  # the first wins, as the linear search did
            last = self._latest[groups.cluster] = (groups, index)
        return last[1].get(group)


_index = _GroupIndex()


def find_group(groups: GroupsObservation | None, group: str) -> GroupInfo | None:
    return _index.find(groups, group) if groups else None


class LogRanges:
    """The latest log range of each partition, read from the store one topic at a time, on demand."""

    def __init__(self, store: Store, cluster: str) -> None:
        self._store = store
        self._cluster = cluster
        self._topics: dict[str, dict[int, LatestPartition]] = {}

    def get(self, topic: str, partition: int) -> LatestPartition | None:
        if topic not in self._topics:
            rows = self._store.latest_partitions(self._cluster, topic)
            self._topics[topic] = {p.partition: p for p in rows}
        return self._topics[topic].get(partition)


def committed_or_404(store: Store, cluster: str, group: str, info: GroupInfo | None) -> list[LatestCommitted]:
    """The group's live committed offsets; 404 if neither the store nor the groups poll knows it."""
    every = store.latest_committed(cluster, group, include_deleted=True)
    if not every and info is None:
        raise NotFound(f"unknown group {group!r} in cluster {cluster!r}", code="group_not_found")
    return [c for c in every if c.offset is not None]


def partition_states(
    store: Store,
    cluster: str,
    committed: Iterable[LatestCommitted],
    ranges: LogRanges,
    members: Mapping[tuple[str, str, int], str],
    now: float,
) -> list[PartitionState]:
    pairs = []
    for c in committed:
        assert c.offset is not None
        r = ranges.get(c.topic, c.partition)
        log_end = r.log_end if r else None
        row = ((c.group, c.topic, c.partition), c.offset, None if log_end is None else log_end - c.offset)
        pairs.append((c, r, row))
    wanted = wanted_offsets(row for _, _, row in pairs)
    reached = store.log_end_reached_at_many(cluster, wanted) if wanted else {}
    return [
        PartitionState(
            topic=c.topic,
            partition=c.partition,
            committed_offset=row[1],
            leader_epoch=c.leader_epoch,
            metadata=c.metadata,
            log_start=r.log_start if r else None,
            log_end=r.log_end if r else None,
            lag=row[2],
            lag_seconds=lag_seconds(row, reached, now),
            last_commit_at=c.changed_at,
            confirmed_at=c.last_seen_at,
            log_observed_at=r.last_seen_at if r else None,
            member_id=members.get((c.group, c.topic, c.partition)),
        )
        for c, r, row in pairs
    ]


def lag_summary(rows: Iterable[PartitionState]) -> LagSummary:
    rows = list(rows)
    lags = [r.lag for r in rows if r.lag is not None]
    seconds = [r.lag_seconds for r in rows if r.lag_seconds is not None]
    return LagSummary(
        partitions=len(rows),
        lag_unknown=len(rows) - len(lags),
        total_lag=sum(max(0, x) for x in lags) if lags else None,
        max_lag=max(lags) if lags else None,
        max_lag_seconds=max(seconds) if seconds else None,
    )


def _member_ids(groups: GroupsObservation | None) -> dict[tuple[str, str, int], str]:
    return {key: m.member_id for key, m in assignments(groups).items()}


def group_detail(
    store: Store,
    groups: GroupsObservation | None,
    cluster: str,
    group: str,
    now: float,
    committed_poll: CommittedObservation | None = None,
    scope: Scope = EVERYTHING,
) -> GroupDetail:
    info = find_group(groups, group)
    unobserved = [
        f"{name}: {f.reason}"
        for name, poll in (("groups", groups), ("committed", committed_poll))
        if poll is not None
        for f in poll.failures
        if f.scope == "group" and f.key == group
    ]
    # a group an ACL hides from the last polls is "not authorized", not "unknown"
    committed = [] if unobserved and info is None else committed_or_404(store, cluster, group, info)
    if not scope.all_topics:  # history kept from before the scope left these topics out
        committed = [c for c in committed if scope.pair_in(group, c.topic)]
    # a topic an ACL hides: its offsets are the last ones seen, and the detail says they are not seen now
    hidden = {f.key: f for f in committed_poll.failures if f.scope == "topic"} if committed_poll else {}
    if hidden:
        topics = sorted({c.topic for c in committed} & hidden.keys())
        unobserved += [f"committed: topic:{t}: {hidden[t].reason}" for t in topics]
    members = _member_ids(GroupsObservation(cluster, 0.0, (info,)) if info else None)
    rows = partition_states(store, cluster, committed, LogRanges(store, cluster), members, now)
    return GroupDetail(
        cluster=cluster,
        group=group,
        state=info.state if info else None,
        type=info.group_type if info else None,
        protocol_type=info.protocol_type if info else None,
        protocol=info.protocol if info else None,
        coordinator=info.coordinator if info else None,
        group_epoch=info.group_epoch if info else None,
        observed_at=groups.observed_at if groups and info else None,
        members=[
            MemberOut(
                member_id=m.member_id,
                client_id=m.client_id,
                host=m.host,
                instance_id=m.instance_id,
                member_epoch=m.member_epoch,
                assignment=[TopicPartitionRef(topic=t, partition=p) for t, p in m.assignment],
            )
            for m in (info.members if info else ())
        ],
        partitions=rows,
        lag=lag_summary(rows),
        unobserved=unobserved,
    )


def _worst(alerts: Iterable[Alert]) -> dict[str, tuple[Alert, int]]:
    """group -> (its most severe firing alert, newest first among equals; how many fire)."""
    found: dict[str, tuple[Alert, int]] = {}
    for a in alerts:
        if a.group is None:
            continue
        best, count = found.get(a.group, (a, 0))
        if (SEVERITY_RANK.get(a.severity, 0), a.started_at) > (
            SEVERITY_RANK.get(best.severity, 0),
            best.started_at,
        ):
            best = a
        found[a.group] = (best, count + 1)
    return found


def group_list(
    store: Store,
    firing_of: Callable[[list[str]], Iterable[Alert]],
    groups: GroupsObservation | None,
    cluster: str,
    *,
    limit: int,
    cursor: str | None,
    now: float,
    search: str | None = None,
    scope: Scope = EVERYTHING,
) -> GroupList:
    """One page of the cluster's groups (known to the store or to the last groups poll), sorted by id;
    with ``search``, only the ids containing it (case-insensitive). ``firing_of(page)``: the firing alerts
    of the page's groups. What ``scope`` leaves out is not listed, though the store may keep its history
    from before."""
    polled = {g.group_id: g for g in groups.groups} if groups else {}
    names = sorted(set(store.groups(cluster)) | set(polled))
    if not scope.everything:
        names = [n for n in names if scope.group_in(n)]
    if search:
        needle = search.casefold()
        names = [n for n in names if needle in n.casefold()]
    if cursor is not None:
        names = [n for n in names if n > cursor]
    page, more = names[:limit], len(names) > limit
    worst = _worst(firing_of(page))
    ranges = LogRanges(store, cluster)
    members = _member_ids(groups)
    out = []
    for name in page:
        info = polled.get(name)
        committed = [
            c
            for c in store.latest_committed(cluster, name)
            if c.offset is not None and scope.pair_in(name, c.topic)
        ]
        rows = partition_states(store, cluster, committed, ranges, members, now)
        alert, count = worst.get(name, (None, 0))
        out.append(
            GroupSummary(
                group=name,
                state=info.state if info else None,
                type=info.group_type if info else None,
                members=len(info.members) if info else None,
                lag=lag_summary(rows),
                worst_alert=None
                if alert is None
                else AlertBrief(
                    id=alert.id,
                    kind=alert.kind,
                    severity=alert.severity,
                    summary=alert.summary,
                    started_at=alert.started_at,
                ),
                firing_alerts=count,
            )
        )
    return GroupList(cluster=cluster, groups=out, next_cursor=page[-1] if more and page else None)


def group_history(
    store: Store,
    groups: GroupsObservation | None,
    cluster: str,
    group: str,
    *,
    topic: str | None,
    partition: int | None,
    since: float | None,
    until: float | None,
    scope: Scope = EVERYTHING,
) -> GroupHistory:
    """Committed offsets over ``[since, until]`` beside the log start/end of the same partitions.

    With ``since``, each series starts with the state as of ``since`` so a chart has a left edge.
    """
    committed_or_404(store, cluster, group, find_group(groups, group))
    points = store.committed_history(
        cluster, group, topic=topic, partition=partition, since=since, until=until
    )
    if not scope.all_topics:  # history kept from before the scope left these topics out
        points = tuple(c for c in points if scope.pair_in(group, c.topic))
    series: dict[tuple[str, int], PartitionHistory] = {}

    def of(t: str, p: int) -> PartitionHistory:
        return series.setdefault((t, p), PartitionHistory(topic=t, partition=p, committed=[], log=[]))

    if since is not None:
        for c in store.committed_at(cluster, group, since):
            if (
                (topic is None or c.topic == topic)
                and (partition is None or c.partition == partition)
                and scope.pair_in(group, c.topic)
            ):
                of(c.topic, c.partition).committed.append(
                    CommittedPointOut(at=c.observed_at, offset=c.offset, leader_epoch=c.leader_epoch)
                )
    for c in points:
        history = of(c.topic, c.partition)
        if not history.committed or history.committed[-1].at != c.observed_at:
            history.committed.append(
                CommittedPointOut(at=c.observed_at, offset=c.offset, leader_epoch=c.leader_epoch)
            )
    for t in sorted({t for t, _ in series}):
        wanted = {p for tt, p in series if tt == t}
        if since is not None:
            for p in sorted(wanted):
                before = store.partition_at(cluster, t, p, since)
                if before is not None:
                    series[(t, p)].log.append(_log_point(before))
        for point in store.partition_history(cluster, t, since=since, until=until):
            if point.partition in wanted:
                log = series[(t, point.partition)].log
                if not log or log[-1].at != point.observed_at:
                    log.append(_log_point(point))
    return GroupHistory(
        cluster=cluster,
        group=group,
        since=since,
        until=until,
        partitions=[series[k] for k in sorted(series)],
    )


def _log_point(p: PartitionPoint) -> LogPointOut:
    return LogPointOut(
        at=p.observed_at,
        log_start=p.log_start,
        log_end=p.log_end,
        leader=p.leader,
        leader_epoch=p.leader_epoch,
    )


def offsets_at(
    store: Store, groups: GroupsObservation | None, cluster: str, group: str, at: float
) -> OffsetsAt:
    """What ``group`` had committed at ``at`` (partitions deleted by then left out)."""
    committed_or_404(store, cluster, group, find_group(groups, group))
    return OffsetsAt(
        cluster=cluster,
        group=group,
        time=at,
        offsets=[
            OffsetAt(
                topic=c.topic,
                partition=c.partition,
                offset=c.offset,
                leader_epoch=c.leader_epoch,
                committed_at=c.observed_at,
            )
            for c in store.committed_at(cluster, group, at)
            if c.offset is not None
        ],
    )
