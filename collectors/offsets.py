"""Log start and log end (high watermark) of every partition, asking every leader concurrently."""

from __future__ import annotations

import asyncio
from collections import defaultdict

from collectors.errors import KafkaError
from collectors.model import (
    ClusterMetadata,
    Failure,
    OffsetsObservation,
    PartitionInfo,
    PartitionOffsets,
    TopicPartition,
)
from collectors.seam import SeamCollector, failure


class OffsetsCollector(SeamCollector):
    """Collects :class:`OffsetsObservation` for all partitions of the latest metadata.

    Partitions are grouped by leader and each leader gets one ListOffsets round (earliest + latest). A
    leader that cannot be reached becomes one ``broker`` failure plus one ``partition`` failure per
    partition it leads; the other leaders' partitions are still reported.
    """

    name = "offsets"

    async def collect(self) -> OffsetsObservation:
        """One observation; raises :class:`KafkaError` only if no metadata could be had."""
        meta = await self._metadata()
        observed_at = self._clock()
        by_leader: dict[int, list[PartitionInfo]] = defaultdict(list)
        failures: list[Failure] = []
        for p in meta.partitions():
            if p.leader is None:
                failures.append(
                    Failure("partition", f"{p.topic}/{p.partition}", "NoLeader", "partition has no leader")
                )
            else:
                by_leader[p.leader].append(p)
        rounds = await asyncio.gather(
            *(self._ask_leader(meta, leader, ps) for leader, ps in by_leader.items())
        )
        partitions: list[PartitionOffsets] = []
        for found, lost in rounds:
            partitions.extend(found)
            failures.extend(lost)
        partitions.sort(key=lambda o: (o.topic, o.partition))
        return OffsetsObservation(self.cluster, observed_at, tuple(partitions), tuple(failures))

    async def _ask_leader(
        self, meta: ClusterMetadata, leader: int, infos: list[PartitionInfo]
    ) -> tuple[list[PartitionOffsets], list[Failure]]:
        tps = [TopicPartition(p.topic, p.partition) for p in infos]
        try:
            ranges, errors = await asyncio.to_thread(self._seam.list_offsets, leader, tps)
        except KafkaError as exc:
            lost = [failure("broker", str(leader), exc)]
            lost.extend(failure("partition", f"{t}/{p}", exc) for t, p in tps)
            return [], lost
        found: list[PartitionOffsets] = []
        lost = []
        for info, tp in zip(infos, tps, strict=True):
            r = ranges.get(tp)
            if r is not None:
                epoch = r.leader_epoch if r.leader_epoch is not None else info.leader_epoch
                found.append(PartitionOffsets(tp.topic, tp.partition, r.log_start, r.log_end, leader, epoch))
            else:
                err = errors.get(tp) or KafkaError("no offsets returned", cluster=self.cluster)
                lost.append(failure("partition", f"{tp.topic}/{tp.partition}", err))
        return found, lost
