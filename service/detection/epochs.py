"""Live input of the ``epoch_divergence`` detector: KIP-320 OffsetsForLeaderEpoch answers.

For every committed offset whose leader epoch is known and older than its partition's current leader
epoch (from the latest cluster metadata), the current leader is asked where that epoch ends. An answer
for an epoch that has ended never changes, so it is cached per (topic, partition, requested epoch);
questions that failed or got no defined answer are asked again only after :data:`RETRY_SECONDS`. At most
``max_per_cycle`` partitions are asked per evaluation. A failure is logged and yields no answer (so no
finding); it never raises. Which committed offsets are behind is kept between calls: a call told what
changed since the previous one looks at those only (a 5 s cycle changes a few of 50,000), and at all of
them again when the metadata changes. ``complete`` says whether the last call had an answer (an end, or
a leader's word that it has none) for every one of them on a partition with a leader: only then does the
absence of a divergence mean there is none.

Runs inside the detection loop's worker thread: the source (the cluster seam's
``offsets_for_leader_epoch``) is blocking.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from alerts.model import EpochEnd
from alerts.state import CommitKey, CommitPoint
from collectors.errors import KafkaError
from collectors.model import ClusterMetadata, PartitionInfo, TopicPartition
from collectors.seam import EpochEndResult

log = logging.getLogger(__name__)

# What the detection loop asks: the cluster seam's ``offsets_for_leader_epoch`` (leader id, questions).
EpochEndSource = Callable[[int, Sequence[tuple[TopicPartition, int]]], EpochEndResult]
EpochKey = tuple[str, int, int]  # topic, partition, requested epoch
# the committed offsets of an earlier call, and the keys whose point changed since
Changes = tuple[Mapping[CommitKey, CommitPoint], Iterable[CommitKey]]

MAX_PER_CYCLE = 1_000
MAX_CACHED = 200_000
RETRY_SECONDS = 60.0


class EpochEnds:
    """Call with the cycle's committed offsets and the latest metadata; returns the known epoch ends."""

    def __init__(
        self,
        cluster: str,
        source: EpochEndSource,
        *,
        max_per_cycle: int = MAX_PER_CYCLE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cluster = cluster
        self._source = source
        self._max = max_per_cycle
        self._clock = clock
        self._cache: dict[EpochKey, EpochEnd] = {}
        self._retry_at: dict[EpochKey, float] = {}
        self._indexed: tuple[ClusterMetadata, dict[tuple[str, int], PartitionInfo]] | None = None
        # the committed offsets last looked at, and those of them behind their leader epoch (by epoch)
        self._commits: Mapping[CommitKey, CommitPoint] | None = None
        self._behind: dict[CommitKey, int] | None = None
        # whether the last call had an answer for every committed offset behind its leader epoch
        self.complete = False

    def __call__(
        self,
        commits: Mapping[CommitKey, CommitPoint],
        metadata: ClusterMetadata | None,
        since: Changes | None = None,
    ) -> tuple[EpochEnd, ...]:
        """``since``: the committed offsets of the previous call and the keys changed from them to
        ``commits`` (a replay's ``changed``); then only those are looked at again, unless the metadata
        changed (the current leader epochs with it)."""
        if metadata is None:
            self.complete = False
            return ()
        if self._indexed is None or self._indexed[0] is not metadata:  # metadata changes every 30 s
            self._indexed = (
                metadata,
                {(p.topic, p.partition): p for t in metadata.topics for p in t.partitions},
            )
            self._behind = None
        current = self._indexed[1]
        behind = self._behind
        if behind is not None and since is not None and since[0] is self._commits:
            for key in since[1]:
                point = commits.get(key)
                epoch = None if point is None else _older(point, current.get(key[1:]))
                if epoch is None:
                    behind.pop(key, None)
                else:
                    behind[key] = epoch
        else:  # every committed offset whose epoch is older than its partition's current leader epoch
            behind = {}
            for key, point in commits.items():
                if (epoch := _older(point, current.get(key[1:]))) is not None:
                    behind[key] = epoch
        self._behind, self._commits = behind, commits
        now = self._clock()
        known: dict[EpochKey, EpochEnd] = {}
        wanted: dict[int, list[tuple[TopicPartition, int]]] = defaultdict(list)
        asked: set[EpochKey] = set()
        deferred = False  # an end not known and not asked this call (retried later, or over the bound)
        for key, epoch in behind.items():
            ek = (key.topic, key.partition, epoch)
            if ek in known or ek in asked:
                continue
            cached = self._cache.get(ek)
            if cached is not None:
                known[ek] = cached
                continue
            p = current[(key.topic, key.partition)]
            if p.leader is None:
                continue  # offline: no log range either, on which the detector judges first
            if self._retry_at.get(ek, 0.0) <= now and len(asked) < self._max:
                asked.add(ek)
                wanted[p.leader].append((TopicPartition(key.topic, key.partition), epoch))
            else:
                deferred = True
        for leader, questions in sorted(wanted.items()):
            for batch in _rounds(questions):
                known.update(self._ask(leader, batch, now))
        self.complete = not deferred and asked.issubset(known)
        return tuple(known[k] for k in sorted(known))

    def _ask(
        self, leader: int, questions: Sequence[tuple[TopicPartition, int]], now: float
    ) -> dict[EpochKey, EpochEnd]:
        retry = now + RETRY_SECONDS
        try:
            answers = self._source(leader, questions)
        except Exception as exc:  # KafkaError, or a bug: never stop the evaluation
            log.warning(
                "detection %s: OffsetForLeaderEpoch to broker %s failed (%d partitions): %s",
                self.cluster,
                leader,
                len(questions),
                exc,
                extra={"cluster": self.cluster},
            )
            for tp, epoch in questions:
                self._retry_at[(tp.topic, tp.partition, epoch)] = retry
            return {}
        found: dict[EpochKey, EpochEnd] = {}
        for tp, epoch in questions:
            ek = (tp.topic, tp.partition, epoch)
            answer = answers.get(tp)
            if isinstance(answer, KafkaError) or answer is None:
                log.debug("detection %s: no epoch end of %s: %s", self.cluster, ek, answer)
                self._retry_at[ek] = retry
                continue
            leader_epoch, end_offset = answer
            end = EpochEnd(tp.topic, tp.partition, epoch, leader_epoch, end_offset)
            found[ek] = end
            if leader_epoch < 0 or end_offset < 0:
                self._retry_at[ek] = retry  # undefined: maybe not yet known, ask again later
                continue
            self._retry_at.pop(ek, None)
            if len(self._cache) >= MAX_CACHED:
                self._cache.pop(next(iter(self._cache)))
            self._cache[ek] = end
        if len(self._retry_at) > MAX_CACHED:
            self._retry_at = {k: t for k, t in self._retry_at.items() if t > now}
        return found


def _older(point: CommitPoint, p: PartitionInfo | None) -> int | None:
    """``point``'s leader epoch if it is known and older than ``p``'s current one, else None."""
    epoch = point.leader_epoch
    if epoch is None or epoch < 0 or p is None or epoch >= p.leader_epoch:
        return None
    return epoch


def _rounds(questions: Sequence[tuple[TopicPartition, int]]) -> list[list[tuple[TopicPartition, int]]]:
    """Split so no request names a partition twice (groups may have committed under different epochs)."""
    rounds: list[list[tuple[TopicPartition, int]]] = []
    seen: dict[TopicPartition, int] = {}
    for tp, epoch in questions:
        i = seen.get(tp, 0)
        seen[tp] = i + 1
        if i == len(rounds):
            rounds.append([])
        rounds[i].append((tp, epoch))
    return rounds
