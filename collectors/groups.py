"""Every group of the cluster with its type, state, assignor, members and their assignments."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import replace

from collectors.errors import KafkaError
from collectors.model import Failure, GroupInfo, GroupsObservation
from collectors.scope import Scope
from collectors.seam import ListedGroup, SeamCollector, failure

# Group types described with DescribeGroups / ConsumerGroupDescribe; others are reported as listed.
_CLASSIC, _CONSUMER = "classic", "consumer"


class GroupsCollector(SeamCollector):
    """Collects :class:`GroupsObservation`.

    ListGroups sent to a broker returns exactly the groups that broker coordinates, so each broker gets
    one ListGroups, then one DescribeGroups for its classic groups and one ConsumerGroupDescribe for its
    KIP-848 groups — all brokers at once. A broker that cannot be reached is a ``broker`` failure; a group
    whose description fails (e.g. it moved coordinator meanwhile) is a ``group`` failure. A group out of
    scope is never described, only counted; members' assignments on topics out of scope are left out.
    """

    name = "groups"

    async def collect(self) -> GroupsObservation:
        """One observation; raises :class:`KafkaError` only if no metadata could be had."""
        meta = await self._metadata()
        observed_at = self._clock()
        rounds = await asyncio.gather(*(self._ask_broker(b.node_id) for b in meta.brokers))
        groups: dict[str, GroupInfo] = {}
        failures: list[Failure] = []
        excluded: set[str] = set()
        for found, lost, left_out in rounds:
            for g in found:
                groups.setdefault(g.group_id, g)
            failures.extend(lost)
            excluded.update(left_out)
        scope = self.scope
        if not scope.all_topics:
            groups = {k: _assigned_in(g, scope) for k, g in groups.items()}
        ordered = tuple(groups[k] for k in sorted(groups))
        return GroupsObservation(self.cluster, observed_at, ordered, tuple(failures), len(excluded))

    async def _ask_broker(self, broker: int) -> tuple[list[GroupInfo], list[Failure], list[str]]:
        try:
            listed = await asyncio.to_thread(self._seam.list_groups, broker)
        except KafkaError as exc:
            return [], [failure("broker", str(broker), exc)], []
        left_out: list[str] = []
        if not self.scope.everything:
            group_in = self.scope.group_in
            left_out = [g.group_id for g in listed if not group_in(g.group_id)]
            if left_out:
                listed = [g for g in listed if group_in(g.group_id)]
        classic = [g for g in listed if g.group_type == _CLASSIC]
        consumer = [g for g in listed if g.group_type == _CONSUMER]
        found = [_as_listed(g, broker) for g in listed if g.group_type not in (_CLASSIC, _CONSUMER)]
        lost: list[Failure] = []
        described = await asyncio.gather(
            self._describe(self._seam.describe_classic_groups, broker, classic),
            self._describe(self._seam.describe_consumer_groups, broker, consumer),
        )
        for infos, errors in described:
            found.extend(infos)
            lost.extend(errors)
        return found, lost, left_out

    async def _describe(
        self,
        describe: Callable[[int, Sequence[str]], dict[str, GroupInfo | KafkaError]],
        broker: int,
        listed: list[ListedGroup],
    ) -> tuple[list[GroupInfo], list[Failure]]:
        if not listed:
            return [], []
        ids = [g.group_id for g in listed]
        try:
            result = await asyncio.to_thread(describe, broker, ids)
        except KafkaError as exc:
            return [], [failure("group", g, exc) for g in ids]
        found: list[GroupInfo] = []
        lost: list[Failure] = []
        for g in ids:
            got = result.get(g)
            if isinstance(got, GroupInfo):
                found.append(got)
            else:
                err = got or KafkaError(
                    "coordinator did not describe the group", cluster=self.cluster, group=g
                )
                lost.append(failure("group", g, err))
        return found, lost


def _assigned_in(group: GroupInfo, scope: Scope) -> GroupInfo:
    """``group`` without its members' assignments on topics out of scope (for it)."""
    gid = group.group_id
    if all(scope.pair_in(gid, tp.topic) for m in group.members for tp in m.assignment):
        return group
    members = tuple(
        replace(m, assignment=tuple(tp for tp in m.assignment if scope.pair_in(gid, tp.topic)))
        for m in group.members
    )
    return replace(group, members=members)


def _as_listed(group: ListedGroup, coordinator: int) -> GroupInfo:
    """A share/streams group as ListGroups reports it (they have no consumer-protocol description)."""
    return GroupInfo(
        group_id=group.group_id,
        group_type=group.group_type,
        state=group.state,
        protocol_type=group.protocol_type,
        protocol="",
        coordinator=coordinator,
    )
