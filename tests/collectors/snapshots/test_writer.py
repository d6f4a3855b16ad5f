"""take_snapshot over a literal reader: files, counts, folding, size cap, atomicity and failures."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from collectors.codec import partition_for
from collectors.errors import KafkaUnavailableError
from collectors.snapshots import (
    SnapshotError,
    SnapshotResult,
    iter_records,
    read_manifest,
    read_state,
    snapshot_ids,
    take_snapshot,
    verify,
)
from collectors.snapshots.files import sha256_of
from tests.collectors.snapshots.fakes import (
    FakeReader,
    ListIndex,
    commit,
    corrupt,
    group_metadata,
    group_tombstone,
    marker,
    offset_tombstone,
    unknown,
)


def snap(reader: FakeReader, directory: Path, group: str = "g1", **kw: Any) -> SnapshotResult:
    kw.setdefault("max_bytes", 10**7)
    kw.setdefault("keep", 10)
    return take_snapshot(reader, cluster="c1", group=group, directory=directory, **kw)


def offsets_of(state: dict[str, Any], group: str) -> dict[tuple[str, int], int]:
    return {(o["topic"], o["partition"]): o["offset"] for o in state["groups"][group]["offsets"]}


def test_take_snapshot_commits_and_offset_tombstones_folds_latest_per_partition(tmp_path: Path) -> None:
    reader = FakeReader(
        [
            commit(10, "g1", "t", 0, 5),
            commit(11, "g1", "t", 1, 7),
            commit(12, "g1", "t", 0, 9, epoch=8, metadata="m9"),
            offset_tombstone(13, "g1", "t", 1),
            commit(14, "g2", "t", 0, 100),
        ]
    )
    result = snap(reader, tmp_path)
    state = read_state(tmp_path, result.info.id)
    assert offsets_of(state, "g1") == {("t", 0): 9}
    assert offsets_of(state, "g2") == {("t", 0): 100}
    entry = state["groups"]["g1"]["offsets"][0]
    assert (entry["leader_epoch"], entry["metadata"], entry["record_offset"]) == (8, "m9", 12)
    assert entry["commit_timestamp"] == 1_767_225_600_000 + 12
    assert state["requested_group"] == "g1" and state["requested_group_found"] is True


def test_take_snapshot_delete_groups_removes_offsets_and_marks_group_deleted(tmp_path: Path) -> None:
    reader = FakeReader(
        [
            group_metadata(0, "g1"),
            commit(1, "g1", "t", 0, 5),
            commit(2, "g1", "t", 1, 6),
            offset_tombstone(3, "g1", "t", 0),
            offset_tombstone(4, "g1", "t", 1),
            group_tombstone(5, "g1"),
        ]
    )
    result = snap(reader, tmp_path)
    group = read_state(tmp_path, result.info.id)["groups"]["g1"]
    assert group["offsets"] == []
    assert group["deleted"] is True
    assert result.counts.tombstones == 3
    assert (result.counts.offset_tombstones, result.counts.group_tombstones) == (2, 1)


def test_take_snapshot_group_tombstone_alone_keeps_offsets(tmp_path: Path) -> None:
    reader = FakeReader([group_metadata(0, "g1"), commit(1, "g1", "t", 0, 5), group_tombstone(2, "g1")])
    state = read_state(tmp_path, snap(reader, tmp_path).info.id)
    assert offsets_of(state, "g1") == {("t", 0): 5}
    assert state["groups"]["g1"]["deleted"] is True


def test_take_snapshot_group_recreated_after_tombstone_not_deleted(tmp_path: Path) -> None:
    reader = FakeReader([group_tombstone(0, "g1"), group_metadata(1, "g1", generation=2)])
    state = read_state(tmp_path, snap(reader, tmp_path).info.id)
    assert state["groups"]["g1"]["deleted"] is False
    assert state["groups"]["g1"]["last_group_record_offset"] == 1


def test_take_snapshot_unknown_and_corrupt_records_counted_and_kept(tmp_path: Path) -> None:
    reader = FakeReader([commit(0, "g1", "t", 0, 1), unknown(1), corrupt(2), commit(3, "g1", "t", 0, 2)])
    result = snap(reader, tmp_path)
    lines = list(iter_records(tmp_path, result.info.id))
    assert [line["offset"] for line in lines] == [0, 1, 2, 3]
    assert lines[1]["decoded"]["type"] == "UnknownRecord" and lines[1]["error"] is None
    assert lines[2]["decoded"] is None and "corrupt" in lines[2]["error"]
    counts = result.counts
    assert (counts.total, counts.commits, counts.unknown, counts.decode_errors) == (4, 2, 1, 1)
    manifest = read_manifest(tmp_path, result.info.id)
    assert manifest["counts"]["unknown"] == 1 and manifest["counts"]["decode_errors"] == 1
    assert offsets_of(read_state(tmp_path, result.info.id), "g1") == {("t", 0): 2}


def test_take_snapshot_record_lines_carry_base64_bytes_and_decoded_fields(tmp_path: Path) -> None:
    records = [commit(7, "g1", "t", 3, 42, metadata="hello"), offset_tombstone(8, "g1", "t", 3)]
    result = snap(FakeReader(records), tmp_path)
    first, second = iter_records(tmp_path, result.info.id)
    assert base64.b64decode(first["key"]) == records[0].key
    assert base64.b64decode(first["value"]) == records[0].value
    assert first["timestamp"] == records[0].timestamp
    assert first["partition"] == result.info.partition
    assert first["decoded"]["type"] == "OffsetCommit"
    assert first["decoded"]["fields"]["offset"] == 42 and first["decoded"]["fields"]["metadata"] == "hello"
    assert second["value"] is None and second["decoded"]["type"] == "OffsetCommitTombstone"


def test_take_snapshot_manifest_hashes_and_sizes_match_files(tmp_path: Path) -> None:
    result = snap(FakeReader([commit(i, "g1", "t", i % 3, i) for i in range(20)]), tmp_path)
    path = Path(result.info.path)
    manifest = read_manifest(tmp_path, result.info.id)
    for name in ("records.jsonl.gz", "state.json"):
        assert manifest["files"][name]["sha256"] == sha256_of(path / name)
        assert manifest["files"][name]["bytes"] == (path / name).stat().st_size
    assert result.info.manifest_sha256 == sha256_of(path / "manifest.json")
    assert verify(tmp_path, result.info.id) == []
    (path / "state.json").write_text("{}")
    assert verify(tmp_path, result.info.id) == ["state.json"]


def test_take_snapshot_uses_real_partition_count_for_partition(tmp_path: Path) -> None:
    group = "orders-consumer"
    assert partition_for(group, 7) != partition_for(group, 50)
    reader = FakeReader([commit(0, group, "t", 0, 1)], partitions=7)
    result = snap(reader, tmp_path, group=group)
    assert result.info.partition == partition_for(group, 7)
    assert {p for p, _ in reader.fetches} == {partition_for(group, 7)}
    manifest = read_manifest(tmp_path, result.info.id)
    assert (manifest["partition"], manifest["partition_count"]) == (partition_for(group, 7), 7)


def test_take_snapshot_records_past_captured_end_not_read(tmp_path: Path) -> None:
    reader = FakeReader([commit(i, "g1", "t", 0, i) for i in range(10)], log_start=2, log_end=6)
    result = snap(reader, tmp_path)
    assert [line["offset"] for line in iter_records(tmp_path, result.info.id)] == [2, 3, 4, 5]
    manifest = read_manifest(tmp_path, result.info.id)
    assert manifest["offsets"] == {"log_start": 2, "first": 2, "last": 5, "end": 6}
    assert offsets_of(read_state(tmp_path, result.info.id), "g1") == {("t", 0): 5}


def test_take_snapshot_size_cap_truncates_and_marks_manifest(tmp_path: Path) -> None:
    # Distinct metadata per record keeps the gzip from shrinking 2000 records below the cap.
    records = [commit(i, "g1", "t", i % 4, i, metadata=f"{i * 7919:x}" * 8) for i in range(2000)]
    result = snap(FakeReader(records, per_fetch=100), tmp_path, max_bytes=8192)
    path = Path(result.info.path)
    manifest = read_manifest(tmp_path, result.info.id)
    assert (path / "records.jsonl.gz").stat().st_size <= 8192
    assert manifest["truncated"] is True and manifest["files"]["records.jsonl.gz"]["truncated"] is True
    assert result.info.truncated is True
    written = [line["offset"] for line in iter_records(tmp_path, result.info.id)]  # whole gzip, readable
    assert 0 < len(written) < 2000 and written == list(range(len(written)))
    assert manifest["offsets"]["last"] == written[-1] and manifest["counts"]["total"] == len(written)
    state = read_state(tmp_path, result.info.id)
    assert max(offsets_of(state, "g1").values()) == written[-1]  # folded only over what was kept


def test_take_snapshot_under_cap_not_truncated(tmp_path: Path) -> None:
    result = snap(FakeReader([commit(i, "g1", "t", 0, i) for i in range(50)]), tmp_path, max_bytes=10**6)
    assert result.info.truncated is False
    assert read_manifest(tmp_path, result.info.id)["counts"]["total"] == 50


def test_take_snapshot_transactions_commit_applies_abort_discards_open_pending(tmp_path: Path) -> None:
    reader = FakeReader(
        [
            commit(0, "g1", "t", 0, 1),
            commit(1, "g1", "t", 0, 10, producer_id=7, transactional=True),
            commit(2, "g1", "t", 1, 20, producer_id=8, transactional=True),
            marker(3, 7, commit=True),
            marker(4, 8, commit=False),
            commit(5, "g1", "t", 2, 30, producer_id=9, transactional=True),
        ]
    )
    result = snap(reader, tmp_path)
    state = read_state(tmp_path, result.info.id)
    assert offsets_of(state, "g1") == {("t", 0): 10}
    assert state["aborted_record_offsets"] == [2] and state["aborted_records"] == 1
    assert state["open_transactions"] == [{"producer_id": 9, "first_offset": 5, "record_offsets": [5]}]
    counts = result.counts
    assert (counts.control, counts.transactional, counts.aborted, counts.total) == (2, 3, 1, 6)
    lines = list(iter_records(tmp_path, result.info.id))
    assert lines[1]["producer_id"] == 7 and lines[1]["transactional"] is True
    assert (lines[3]["control"], lines[3]["marker"], lines[4]["marker"]) == (True, "COMMIT", "ABORT")


def test_take_snapshot_reader_error_leaves_nothing_behind(tmp_path: Path) -> None:
    error = KafkaUnavailableError("broker gone", cluster="c1")
    reader = FakeReader([commit(i, "g1", "t", 0, i) for i in range(10)], fail={2: error})
    index = ListIndex()
    with pytest.raises(KafkaUnavailableError):
        snap(reader, tmp_path, index=index)
    assert list(tmp_path.iterdir()) == []
    assert index.rows == {}


def test_take_snapshot_during_read_no_snapshot_visible(tmp_path: Path) -> None:
    seen: list[tuple[list[str], list[str]]] = []

    def look() -> None:
        names = sorted(p.name for p in tmp_path.iterdir())
        seen.append((snapshot_ids(tmp_path), names))

    reader = FakeReader([commit(i, "g1", "t", 0, i) for i in range(9)], on_fetch=look)
    result = snap(reader, tmp_path)
    assert len(seen) == 3
    assert all(ids == [] for ids, _ in seen)
    assert all(len(names) == 1 and names[0].startswith(".partial-") for _, names in seen)
    assert [p.name for p in tmp_path.iterdir()] == [result.info.id]
    assert sorted(p.name for p in Path(result.info.path).iterdir()) == [
        "manifest.json",
        "records.jsonl.gz",
        "state.json",
    ]


def test_take_snapshot_progress_reaches_total(tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []
    reader = FakeReader([commit(i, "g1", "t", 0, i) for i in range(10, 20)], per_fetch=4)
    snap(reader, tmp_path, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(4, 10), (8, 10), (10, 10)]


def test_take_snapshot_reader_without_progress_raises(tmp_path: Path) -> None:
    reader = FakeReader([commit(0, "g1", "t", 0, 1)], stall=True)
    with pytest.raises(SnapshotError, match="no progress"):
        snap(reader, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_take_snapshot_empty_fetch_with_next_offset_moves_on(tmp_path: Path) -> None:
    # A fetch that returns only a control batch or a compacted-away range: no records, later next offset.
    records = [commit(0, "g1", "t", 0, 1), commit(50, "g1", "t", 0, 2)]
    reader = FakeReader(records, per_fetch=1, skip_to={1: 50})
    result = snap(reader, tmp_path)
    assert [offset for _, offset in reader.fetches] == [0, 1, 50]
    assert [line["offset"] for line in iter_records(tmp_path, result.info.id)] == [0, 50]


@pytest.mark.parametrize("trigger", ["", "a b", "../x", "x" * 201])
def test_take_snapshot_invalid_trigger_refused(tmp_path: Path, trigger: str) -> None:
    with pytest.raises(SnapshotError, match="trigger"):
        snap(FakeReader([commit(0, "g1", "t", 0, 1)]), tmp_path, trigger=trigger)
    assert list(tmp_path.iterdir()) == []


def test_take_snapshot_alert_trigger_recorded(tmp_path: Path) -> None:
    index = ListIndex()
    result = snap(FakeReader([commit(0, "g1", "t", 0, 1)]), tmp_path, trigger="alert:rewind-42", index=index)
    assert read_manifest(tmp_path, result.info.id)["trigger"] == "alert:rewind-42"
    assert index.rows[result.info.id].trigger == "alert:rewind-42"


def test_take_snapshot_empty_partition_writes_empty_snapshot(tmp_path: Path) -> None:
    result = snap(FakeReader([], log_start=40, log_end=40), tmp_path)
    manifest = read_manifest(tmp_path, result.info.id)
    assert manifest["offsets"] == {"log_start": 40, "first": None, "last": None, "end": 40}
    assert manifest["counts"]["total"] == 0
    assert read_state(tmp_path, result.info.id)["requested_group_found"] is False
    with gzip.open(Path(result.info.path) / "records.jsonl.gz") as f:
        assert f.read() == b""


def test_take_snapshot_index_gets_info_matching_manifest(tmp_path: Path) -> None:
    index = ListIndex()
    result = snap(FakeReader([commit(3, "g1", "t", 0, 1), commit(4, "g1", "t", 0, 2)]), tmp_path, index=index)
    row = index.rows[result.info.id]
    manifest = json.loads((Path(row.path) / "manifest.json").read_text())
    assert (row.first_offset, row.last_offset, row.record_count) == (3, 4, 2)
    assert row.partition == manifest["partition"] and row.group == "g1" and row.cluster == "c1"
    assert row.bytes == sum(p.stat().st_size for p in Path(row.path).iterdir())


def test_take_snapshot_records_out_of_scope_not_written_and_counted(tmp_path: Path) -> None:
    from collectors.scope import Scope
    from collectors.settings import NameFilter

    reader = FakeReader(
        [
            commit(0, "g1", "t", 0, 1),
            commit(1, "console-consumer-1", "t", 0, 5),
            group_metadata(2, "console-consumer-1"),
            commit(3, "g1", "__internal", 0, 7),
            commit(4, "g1", "t", 0, 2),
        ]
    )
    scope = Scope.from_patterns(NameFilter(exclude=["console-consumer-.*"]), NameFilter(exclude=["__.*"]))
    result = snap(reader, tmp_path, scope=scope)
    lines = list(iter_records(tmp_path, result.info.id))
    assert [line["offset"] for line in lines] == [0, 4]
    assert (result.counts.total, result.counts.out_of_scope) == (2, 3)
    state = read_state(tmp_path, result.info.id)
    assert set(state["groups"]) == {"g1"} and offsets_of(state, "g1") == {("t", 0): 2}


def test_take_snapshot_group_out_of_scope_refused(tmp_path: Path) -> None:
    from collectors.scope import Scope
    from collectors.settings import NameFilter

    scope = Scope.from_patterns(NameFilter(exclude=["console-consumer-.*"]))
    with pytest.raises(SnapshotError, match="excluded by the scope"):
        snap(FakeReader([]), tmp_path, group="console-consumer-1", scope=scope)
    assert snapshot_ids(tmp_path) == []
