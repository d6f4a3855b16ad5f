"""Folding a partition's records into the state at its end: latest committed offsets, group liveness.

Offsets are folded by offset records only, as the group coordinator replays them: an OffsetCommit sets
(group, topic, partition), an OffsetCommitTombstone removes it. DeleteGroups writes one offset tombstone
per partition *and* a group tombstone; the group tombstone alone does not remove offsets (the coordinator
keeps offsets of a group without metadata), it only marks the group deleted here.

Transactional offset commits (TxnOffsetCommit) take effect only when their producer's COMMIT marker
follows; an ABORT marker discards them. Records of transactions still open at the end are reported as
open, not applied: the coordinator does not serve them either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from collectors.codec import GroupTombstone, OffsetCommit, OffsetCommitTombstone, Record
from collectors.codec.record_types import CONSUMER_GROUP_METADATA, GROUP_METADATA
from collectors.raw_reader import TOPIC, RawRecord
from collectors.snapshots.model import FORMAT_VERSION

# Keys that stand for a whole group (not one member): their tombstone means the group was deleted.
_GROUP_KEYS = frozenset({GROUP_METADATA, CONSUMER_GROUP_METADATA})
MAX_LISTED_ABORTED = 10_000  # aborted record offsets listed in state.json (all are counted)


@dataclass(slots=True)
class _Group:
    last_record_offset: int | None = None
    last_record_type: str | None = None
    deleted: bool = False


@dataclass(slots=True)
class _Transaction:
    first_offset: int
    entries: list[tuple[RawRecord, Record | None]] = field(default_factory=list)


class OffsetFold:
    """Apply records in offset order with :meth:`apply`; read the result with :meth:`state`."""

    def __init__(self) -> None:
        self.offsets: dict[tuple[str, str, int], dict[str, Any]] = {}
        self._groups: dict[str, _Group] = {}
        self._open: dict[int, _Transaction] = {}
        self.aborted = 0
        self.aborted_offsets: list[int] = []

    def apply(self, raw: RawRecord, record: Record | None) -> None:
        """Fold one record (``record`` is None for markers and undecodable records)."""
        if raw.control:
            self._end_transaction(raw)
        elif raw.transactional:
            txn = self._open.setdefault(raw.producer_id, _Transaction(raw.offset))
            txn.entries.append((raw, record))
        elif record is not None:
            self._apply(raw, record)

    def _end_transaction(self, marker: RawRecord) -> None:
        txn = self._open.pop(marker.producer_id, None)
        if txn is None:
            return
        if marker.marker == "COMMIT":
            for raw, record in txn.entries:
                if record is not None:
                    self._apply(raw, record)
            return
        self.aborted += len(txn.entries)
        room = MAX_LISTED_ABORTED - len(self.aborted_offsets)
        self.aborted_offsets.extend(raw.offset for raw, _ in txn.entries[: max(room, 0)])

    def _apply(self, raw: RawRecord, record: Record) -> None:
        if isinstance(record, OffsetCommit):
            self._group(record.group)
            self.offsets[(record.group, record.topic, record.partition)] = {
                "topic": record.topic,
                "partition": record.partition,
                "offset": record.offset,
                "leader_epoch": record.leader_epoch,
                "metadata": record.metadata,
                "commit_timestamp": record.commit_timestamp,
                "expire_timestamp": record.expire_timestamp,
                "topic_id": record.topic_id,
                "record_offset": raw.offset,
                "record_type": record.record_type,
                "version": record.version,
            }
        elif isinstance(record, OffsetCommitTombstone):
            self._group(record.group)
            self.offsets.pop((record.group, record.topic, record.partition), None)
        else:
            group_name = getattr(record, "group", None)
            if not isinstance(group_name, str):
                return  # UnknownRecord: no group to attribute it to
            group = self._group(group_name)
            group.last_record_offset = raw.offset
            group.last_record_type = type(record).__name__
            if record.record_type in _GROUP_KEYS:
                group.deleted = isinstance(record, GroupTombstone) and record.member_id is None

    def _group(self, name: str) -> _Group:
        group = self._groups.get(name)
        if group is None:
            group = self._groups[name] = _Group()
        return group

    def group_offsets(self, group: str) -> list[dict[str, Any]]:
        """The folded offsets of ``group``, by topic then partition."""
        return [v for (g, _, _), v in sorted(self.offsets.items()) if g == group]

    def state(
        self, *, cluster: str, partition: int, group: str, last_offset: int | None, end_offset: int
    ) -> dict[str, Any]:
        """The JSON-ready ``state.json`` content: every group seen in the partition, ``group`` named."""
        by_group: dict[str, list[dict[str, Any]]] = {name: [] for name in self._groups}
        for (g, _, _), entry in sorted(self.offsets.items()):
            by_group.setdefault(g, []).append(entry)
        groups = {
            name: {
                "offsets": by_group[name],
                "deleted": self._groups[name].deleted,
                "last_group_record_offset": self._groups[name].last_record_offset,
                "last_group_record_type": self._groups[name].last_record_type,
            }
            for name in sorted(by_group)
        }
        return {
            "format_version": FORMAT_VERSION,
            "cluster": cluster,
            "topic": TOPIC,
            "partition": partition,
            "requested_group": group,
            "requested_group_found": group in groups,
            "last_offset": last_offset,
            "end_offset": end_offset,
            "groups": groups,
            "open_transactions": [
                {
                    "producer_id": pid,
                    "first_offset": txn.first_offset,
                    "record_offsets": [raw.offset for raw, _ in txn.entries],
                }
                for pid, txn in sorted(self._open.items())
            ],
            "aborted_records": self.aborted,
            "aborted_record_offsets": self.aborted_offsets,
        }
