"""The embedded store: offset history in one SQLite file (WAL), versioned by ordered migrations.

Open it with :meth:`Store.open`; every failure surfaces as :class:`collectors.errors.StoreError`.
"""

from collectors.snapshots import SnapshotInfo
from store.records import (
    CommittedPoint,
    LatestCommitted,
    LatestPartition,
    PartitionPoint,
    TailPosition,
    ThinCounts,
    WriteCounts,
)
from store.store import Store

__all__ = [
    "CommittedPoint",
    "LatestCommitted",
    "LatestPartition",
    "PartitionPoint",
    "SnapshotInfo",
    "Store",
    "TailPosition",
    "ThinCounts",
    "WriteCounts",
]
