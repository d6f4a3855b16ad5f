"""Log start and log end (high watermark) of every partition, asking every leader concurrently."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Callable
from operator import attrgetter

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
from collectors.seam import KafkaSeam, MetadataSource, SeamCollector, failure

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
        # The last observation's offsets by partition: an unchanged one is the same object again (most
        # partitions of a cycle), so nothing is built for it and readers can tell it apart by identity.
        self._known: dict[TopicPartition, PartitionOffsets] = {}

    async def collect(self) -> OffsetsObservation:
        """One observation; raises :class:`KafkaError` only if no metadata could be had."""
        meta = await self._metadata()
        observed_at = self._clock()
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
        known: dict[TopicPartition, PartitionOffsets] = {}
        rounds = await asyncio.gather(
            *(self._ask_leader(meta, leader, ps, known) for leader, ps in by_leader.items())
        )
        self._known = known
        partitions: list[PartitionOffsets] = []
        for found, lost in rounds:
            partitions.extend(found)
            failures.extend(lost)
        partitions.sort(key=_by_partition)
        return OffsetsObservation(self.cluster, observed_at, tuple(partitions), tuple(failures))

    async def _ask_leader(
        self,
        meta: ClusterMetadata,
        leader: int,
        infos: list[PartitionInfo],
        known: dict[TopicPartition, PartitionOffsets],
    ) -> tuple[list[PartitionOffsets], list[Failure]]:
        """The offsets ``leader`` gave for ``infos`` (each also put in ``known``) and what it did not."""
        tps = self._partitions(leader, tuple(infos))
        try:
            ranges, errors = await asyncio.to_thread(self._seam.list_offsets, leader, tps)
        except KafkaError as exc:
            lost = [failure("broker", str(leader), exc)]
            lost.extend(failure("partition", f"{t}/{p}", exc) for t, p in tps)
            return [], lost
        found: list[PartitionOffsets] = []
        lost = []
        last = self._known
        for info, tp in zip(infos, tps, strict=True):
            r = ranges.get(tp)
            if r is not None:
                epoch = r.leader_epoch if r.leader_epoch is not None else info.leader_epoch
                o = last.get(tp)
                if (
                    o is None
                    or o.log_end != r.log_end
                    or o.log_start != r.log_start
                    or o.leader_epoch != epoch
                    or o.leader != leader
                ):
                    o = PartitionOffsets(tp.topic, tp.partition, r.log_start, r.log_end, leader, epoch)
                found.append(o)
                known[tp] = o
            else:
                err = errors.get(tp) or KafkaError("no offsets returned", cluster=self.cluster)
                lost.append(failure("partition", f"{tp.topic}/{tp.partition}", err))
        return found, lost

    def _partitions(self, leader: int, infos: tuple[PartitionInfo, ...]) -> tuple[TopicPartition, ...]:
        last = self._asked.get(leader)
        if last is not None and last[0] == infos:
            return last[1]
        tps = tuple(TopicPartition(p.topic, p.partition) for p in infos)
        self._asked[leader] = (infos, tps)
        return tps
