"""Log start and log end (high watermark) of every partition, asking every leader concurrently."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from itertools import compress
from operator import attrgetter, is_, is_not, itemgetter

from collectors.errors import KafkaError
from collectors.model import (
    ClusterMetadata,
    Failure,
    OffsetsObservation,
    PartitionInfo,
    PartitionOffsets,
    TopicPartition,
)
from collectors.scope import EVERYTHING, Scope
from collectors.seam import KafkaSeam, MetadataSource, OffsetRange, SeamCollector, failure

_by_partition = attrgetter("topic", "partition")


class OffsetsCollector(SeamCollector):
    """Collects :class:`OffsetsObservation` for all partitions of the latest metadata.

    Partitions are grouped by leader and each leader gets one ListOffsets round (earliest + latest). A
    leader that cannot be reached becomes one ``broker`` failure plus one ``partition`` failure per
    partition it leads; the other leaders' partitions are still reported.
    """

    name = "offsets"

    def __init__(
        self,
        seam: KafkaSeam,
        cluster: str,
        metadata: MetadataSource,
        clock: Callable[[], float] = time.time,
        *,
        scope: Scope = EVERYTHING,
    ) -> None:
        super().__init__(seam, cluster, metadata, clock, scope=scope)
        # Per leader: the partitions asked last time and their TopicPartitions. Metadata reuses unchanged
        # PartitionInfo objects, so an unchanged leader compares by identity and gets the same tuple
        # again, which the seam recognises cheaply (it caches the encoded request per partition set).
        self._asked: dict[int, tuple[tuple[PartitionInfo, ...], tuple[TopicPartition, ...]]] = {}
        # The plan of the last metadata object (the same object for a metadata interval, six cycles).
        self._plan: _Plan | None = None
        # Per leader: the partitions asked last time and the offsets found for each (None: not found). An
        # unchanged one is the same object again (most partitions of a cycle), so nothing is built for it
        # and readers can tell it apart by identity.
        self._last: dict[int, tuple[tuple[TopicPartition, ...], list[PartitionOffsets | None]]] = {}
        # Per leader, when it last answered for every partition asked: those partitions, its answer for
        # each (the ranges' values, in the order asked) and the offsets made from them.
        self._answers: dict[
            int,
            tuple[tuple[TopicPartition, ...], list[OffsetRange], list[PartitionOffsets | None]],
        ] = {}

    async def collect(self) -> OffsetsObservation:
        """One observation; raises :class:`KafkaError` only if no metadata could be had."""
        meta = await self._metadata()
        observed_at = self._clock()
        plan = self._planned(meta)
        before = _Before(self._last)
        rounds = await asyncio.gather(
            *(self._ask_leader(leader, infos, tps, before) for leader, (infos, tps) in plan.leaders.items())
        )
        self._last = {
            leader: (tps, now)
            for (leader, (_, tps)), (now, _) in zip(plan.leaders.items(), rounds, strict=True)
        }
        failures = list(plan.failures)
        for _, lost in rounds:
            failures.extend(lost)
        answered = [o for now, _ in rounds for o in now]
        if len(failures) == len(plan.failures):  # every leader answered for every partition: the plan's order
            partitions = plan.ordered(answered)
        else:
            partitions = tuple(sorted((o for o in answered if o is not None), key=_by_partition))
        return OffsetsObservation(self.cluster, observed_at, partitions, tuple(failures))

    def _planned(self, meta: ClusterMetadata) -> _Plan:
        """The partitions to ask each leader for, and those without a leader: built once per metadata
        object (and scope), not walked again every cycle."""
        plan = self._plan
        if plan is not None and plan.meta is meta and plan.scope is self.scope:
            return plan
        by_leader: dict[int, list[PartitionInfo]] = defaultdict(list)
        failures: list[Failure] = []
        topic_in = self.scope.topic_in  # the metadata keeps __consumer_offsets even when out of scope
        for p in meta.partitions():
            if not topic_in(p.topic):
                continue
            if p.leader is None:
                failures.append(
                    Failure("partition", f"{p.topic}/{p.partition}", "NoLeader", "partition has no leader")
                )
            else:
                by_leader[p.leader].append(p)
        leaders = {}
        for leader, ps in by_leader.items():
            infos = tuple(ps)
            leaders[leader] = (infos, self._partitions(leader, infos))
        for gone in self._asked.keys() - leaders.keys():  # a broker that leads nothing in scope now
            del self._asked[gone]
            self._answers.pop(gone, None)
        self._plan = plan = _Plan(meta, self.scope, leaders, tuple(failures))
        return plan

    async def _ask_leader(
        self,
        leader: int,
        infos: tuple[PartitionInfo, ...],
        tps: tuple[TopicPartition, ...],
        before: _Before,
    ) -> tuple[list[PartitionOffsets | None], list[Failure]]:
        """The offsets ``leader`` gave for each of ``infos`` (None where it gave none) and what it did not."""
        try:
            ranges, errors = await asyncio.to_thread(self._seam.list_offsets, leader, tps)
        except KafkaError as exc:
            lost = [failure("broker", str(leader), exc)]
            lost.extend(failure("partition", f"{t}/{p}", exc) for t, p in tps)
            return [None] * len(tps), lost
        answers = list(ranges.values())
        complete = not errors and len(answers) == len(tps) and all(map(is_, ranges, tps))
        held = self._answers.pop(leader, None)
        now: list[PartitionOffsets | None]
        if complete and held is not None and held[0] is tps:
            # The seam answers an unchanged partition with the very range object of its last answer: only
            # the partitions whose answer is another object are looked at (found in C; a cycle moves a
            # few of a leader's thousands), the others keep the offsets object made from that answer.
            now = list(held[2])
            for i in compress(range(len(answers)), map(is_not, answers, held[1])):
                now[i] = _offsets(infos[i], tps[i], answers[i], now[i], leader)
            self._answers[leader] = (tps, answers, now)
            return now, []
        now = []
        lost = []
        for info, tp, r, o in zip(infos, tps, map(ranges.get, tps), before.of(leader, tps), strict=True):
            if r is not None:
                now.append(_offsets(info, tp, r, o, leader))
            else:
                now.append(None)
                err = errors.get(tp) or KafkaError("no offsets returned", cluster=self.cluster)
                lost.append(failure("partition", f"{tp.topic}/{tp.partition}", err))
        if complete:
            self._answers[leader] = (tps, answers, now)
        return now, lost

    def _partitions(self, leader: int, infos: tuple[PartitionInfo, ...]) -> tuple[TopicPartition, ...]:
        last = self._asked.get(leader)
        if last is not None and last[0] == infos:
            return last[1]
        tps = tuple(TopicPartition(p.topic, p.partition) for p in infos)
        self._asked[leader] = (infos, tps)
        return tps


def _offsets(
    info: PartitionInfo, tp: TopicPartition, r: OffsetRange, o: PartitionOffsets | None, leader: int
) -> PartitionOffsets:
    """The partition's offsets from its leader's answer ``r``: ``o`` (last cycle's) when they are the same."""
    epoch = r.leader_epoch if r.leader_epoch is not None else info.leader_epoch
    if (
        o is None
        or o.log_end != r.log_end
        or o.log_start != r.log_start
        or o.leader_epoch != epoch
        or o.leader != leader
    ):
        o = PartitionOffsets(tp.topic, tp.partition, r.log_start, r.log_end, leader, epoch)
    return o


class _Plan:
    """Per leader, the partitions of one metadata object to ask it for; the partitions without a leader
    (failures); and the order that sorts every leader's answers, once taken (:meth:`ordered`)."""

    def __init__(
        self,
        meta: ClusterMetadata,
        scope: Scope,
        leaders: dict[int, tuple[tuple[PartitionInfo, ...], tuple[TopicPartition, ...]]],
        failures: tuple[Failure, ...],
    ) -> None:
        self.meta = meta
        self.scope = scope
        self.leaders = leaders
        self.failures = failures
        self._order: Callable[[list[PartitionOffsets | None]], tuple[PartitionOffsets, ...]] | None = None

    def ordered(self, answered: list[PartitionOffsets | None]) -> tuple[PartitionOffsets, ...]:
        """``answered`` (every leader's partitions, in the plan's leader order, none missing) sorted by
        topic and partition: the permutation is the same every cycle of the plan, applied in C."""
        order = self._order
        if order is None:
            keys = [(tp.topic, tp.partition) for _, tps in self.leaders.values() for tp in tps]
            at = sorted(range(len(keys)), key=keys.__getitem__)
            # itemgetter of one index gives the item, not a tuple of it (and of none, refuses)
            order = itemgetter(*at) if len(at) > 1 else _as_tuple
            self._order = order
        return order(answered)


def _as_tuple(answered: list[PartitionOffsets | None]) -> tuple[PartitionOffsets, ...]:
    return tuple(o for o in answered if o is not None)


class _Before:
    """The offsets of the last cycle, aligned with what a leader is asked now: its own list when it is
    asked for the very partitions it was, else looked up by partition (a map built once, when needed)."""

    def __init__(
        self, last: dict[int, tuple[tuple[TopicPartition, ...], list[PartitionOffsets | None]]]
    ) -> None:
        self._last = last
        self._by_partition: dict[TopicPartition, PartitionOffsets] | None = None

    def of(self, leader: int, tps: tuple[TopicPartition, ...]) -> Iterable[PartitionOffsets | None]:
        held = self._last.get(leader)
        if held is not None and held[0] is tps:
            return held[1]
        if self._by_partition is None:
            self._by_partition = {
                tp: o
                for asked, found in self._last.values()
                for tp, o in zip(asked, found, strict=True)
                if o is not None
            }
        return map(self._by_partition.get, tps)
