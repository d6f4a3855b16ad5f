"""One call for "snapshot this group now", shared by ``offsetguard dump`` and the detection side.

Detectors stay pure: the code that acts on an alert calls
``await asyncio.to_thread(dump_group, cluster, group, settings.snapshots, trigger=alert_id, index=store)``.
"""

from __future__ import annotations

from pathlib import Path

from collectors.kafka.raw_reader import KafkaRawReader
from collectors.scope import Scope
from collectors.settings import ClusterSettings, SnapshotSettings
from collectors.snapshots.model import Progress, SnapshotError, SnapshotIndex, SnapshotResult
from collectors.snapshots.writer import take_snapshot


def dump_group(
    cluster: ClusterSettings,
    group: str,
    settings: SnapshotSettings,
    *,
    trigger: str = "manual",
    index: SnapshotIndex | None = None,
    progress: Progress | None = None,
    directory: Path | None = None,
) -> SnapshotResult:
    """Snapshot ``group``'s ``__consumer_offsets`` partition of ``cluster`` over a fresh Kafka reader.

    ``directory`` overrides ``settings.directory``; size cap and retention come from ``settings``; the
    cluster's scope decides what is written (a group out of it is refused). Blocking; raises
    :class:`collectors.errors.KafkaError` or :class:`SnapshotError`.
    """
    scope = Scope.of(cluster)
    if not scope.group_in(group):  # refused before connecting
        raise SnapshotError(
            f"group {group!r} is excluded by the scope of cluster {cluster.name}", group=group
        )
    reader = KafkaRawReader(cluster)
    try:
        return take_snapshot(
            reader,
            cluster=cluster.name,
            group=group,
            directory=directory or settings.directory,
            max_bytes=settings.max_bytes,
            keep=settings.keep,
            trigger=trigger,
            index=index,
            progress=progress,
            scope=scope,
        )
    finally:
        reader.close()
