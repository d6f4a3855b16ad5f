"""What offsetguard does when a broker lacks a Kafka API it would use: each such fallback is counted per
cluster and logged once (the first time it happens), so an operator sees which parts of the picture an
older Kafka gives differently. ``/readyz`` lists them under ``fallbacks``.

Known fallbacks (the version matrix, README "Kafka versions", shows where each happens):

* ``list_groups_untyped``: ListGroups before v5 (Kafka < 3.8) carries no group type; every listed group is
  described as a classic group (KIP-848 groups cannot exist on those brokers).

Older than the matrix (Kafka < 3.0) is not supported: the committed collector needs batched OffsetFetch
(v8, KIP-709) and batched FindCoordinator (v4, KIP-699); such a broker fails the collector with
IncompatibleBrokerVersion, said in ``/readyz``.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

log = logging.getLogger(__name__)

LIST_GROUPS_UNTYPED = "list_groups_untyped"
WHAT = {
    LIST_GROUPS_UNTYPED: "ListGroups without group types (Kafka < 3.8): every group described as classic",
}


@dataclass(frozen=True, slots=True)
class FallbackCount:
    cluster: str
    fallback: str
    count: int
    detail: str  # the first occurrence: which broker, which API version

    def as_dict(self) -> dict[str, object]:
        return {
            "cluster": self.cluster,
            "fallback": self.fallback,
            "count": self.count,
            "what": WHAT.get(self.fallback, self.fallback),
            "detail": self.detail,
        }


class Fallbacks:
    """One cluster's fallback counts (thread-safe: the seam's calls run on worker threads)."""

    def __init__(self, cluster: str) -> None:
        self.cluster = cluster
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._first: dict[str, str] = {}

    def note(self, fallback: str, detail: str) -> None:
        """Count one use of ``fallback``; log it the first time."""
        with self._lock:
            first = fallback not in self._counts
            self._counts[fallback] = self._counts.get(fallback, 0) + 1
            if first:
                self._first[fallback] = detail
        if first:
            log.warning(
                "cluster %s: %s (%s); counted in /readyz fallbacks, logged once",
                self.cluster,
                WHAT.get(fallback, fallback),
                detail,
                extra={"cluster": self.cluster},
            )

    def counts(self) -> tuple[FallbackCount, ...]:
        with self._lock:
            return tuple(
                FallbackCount(self.cluster, name, n, self._first[name])
                for name, n in sorted(self._counts.items())
            )
