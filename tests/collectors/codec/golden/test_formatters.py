"""Golden tests: real workloads on the sandbox, decoded by us and by Kafka 4.1.2's own tools.

One module-scoped run drives every workload (classic commits with 0/126/127/300-byte metadata,
committed and aborted transactional commits, a KIP-848 group, OffsetDelete, DeleteGroups), reads the
raw records, runs the two console formatters and DumpLogSegments, and reads again. Every record a
tool printed is compared with our decoding, whole key and value JSON, field by field (see
:mod:`.kafka_json` for the name mapping and :mod:`.compare` for the matching).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from collectors.codec import (
    ConsumerGroupCurrentMemberAssignment,
    ConsumerGroupMemberMetadata,
    ConsumerGroupRecord,
    GroupMetadata,
    GroupTombstone,
    OffsetCommit,
    OffsetCommitTombstone,
)
from collectors.kafka.offsets_topic import OffsetsTopicSnapshot, read_offsets_topic
from sandbox.cluster import SandboxCluster
from tests.collectors.codec.golden import workloads
from tests.collectors.codec.golden.compare import decoded_records, diff_dump, diff_formatter
from tests.collectors.codec.golden.kafka_tools import (
    GROUP_FORMATTER,
    OFFSETS_FORMATTER,
    DumpOutput,
    FormatterOutput,
    dump_log_segments,
    run_console_formatter,
)

pytestmark = pytest.mark.integration


@dataclass
class GoldenRun:
    workload: workloads.Workload
    before: OffsetsTopicSnapshot
    after: OffsetsTopicSnapshot
    offsets_formatter: FormatterOutput
    group_formatter: FormatterOutput
    dump: DumpOutput


@pytest.fixture(scope="module")
def golden(kafka1: SandboxCluster) -> GoldenRun:
    workload = workloads.run_all(kafka1)
    before = read_offsets_topic(kafka1.bootstrap_servers, isolation_level="read_uncommitted")
    offsets_out = run_console_formatter(kafka1, OFFSETS_FORMATTER, isolation="read_uncommitted")
    group_out = run_console_formatter(kafka1, GROUP_FORMATTER, isolation="read_uncommitted")
    dump = dump_log_segments(kafka1)
    after = read_offsets_topic(kafka1.bootstrap_servers, isolation_level="read_uncommitted")
    return GoldenRun(workload, before, after, offsets_out, group_out, dump)


def _decoded(run: GoldenRun, group: str) -> list[object]:
    return [rec for _, rec in decoded_records(run.before) if getattr(rec, "group", None) == group]


def _report(problems: list[str]) -> str:
    return f"{len(problems)} differences:\n" + "\n".join(problems[:20])


# ------------------------------------------------------------------ comparisons with Kafka's tools


def test_offsets_formatter_every_printed_commit_equals_decoded(golden: GoldenRun) -> None:
    problems = diff_formatter(
        golden.offsets_formatter.printed, frozenset({0, 1}), golden.before, golden.after
    )
    assert not problems, _report(problems)
    assert len(golden.offsets_formatter.printed) >= 10


def test_group_metadata_formatter_every_printed_group_equals_decoded(golden: GoldenRun) -> None:
    problems = diff_formatter(golden.group_formatter.printed, frozenset({2}), golden.before, golden.after)
    assert not problems, _report(problems)
    assert len(golden.group_formatter.printed) >= 5


def test_console_formatters_consumed_every_record_of_the_first_read(golden: GoldenRun) -> None:
    # The console consumer counts records it received, printed or skipped by the formatter.
    for out in (golden.offsets_formatter, golden.group_formatter):
        assert len(golden.before.records) <= out.consumed <= len(golden.after.records)


def test_dump_log_segments_every_record_equals_decoded(golden: GoldenRun) -> None:
    problems = diff_dump(golden.dump, golden.before, golden.after)
    assert not problems, _report(problems)
    assert len(golden.dump.records) >= len(golden.before.records) > 0


# ------------------------------------------------------------------ the workloads produced what we compare


def test_decode_classic_commits_every_metadata_size_round_trips(golden: GoldenRun) -> None:
    commits = [r for r in _decoded(golden, golden.workload.classic_group) if isinstance(r, OffsetCommit)]
    got = sorted((c.partition, c.offset, len(c.metadata), c.version) for c in commits)
    assert got == [(p, p + 1, size, 4) for p, size in enumerate(workloads.METADATA_SIZES)]
    assert all(c.metadata == "x" * len(c.metadata) for c in commits)


def test_decode_classic_group_metadata_has_member_assignment(golden: GoldenRun) -> None:
    groups = [r for r in _decoded(golden, golden.workload.classic_group) if isinstance(r, GroupMetadata)]
    assigned = [
        m.consumer_assignment.partitions
        for g in groups
        for m in g.members
        if m.consumer_assignment is not None and m.consumer_assignment.partitions
    ]
    assert assigned, groups
    assert {tp.topic for parts in assigned for tp in parts} == {golden.workload.topic}


def test_decode_transactional_commits_committed_and_aborted_both_read_uncommitted(golden: GoldenRun) -> None:
    commits = [r for r in _decoded(golden, golden.workload.tx_group) if isinstance(r, OffsetCommit)]
    assert sorted(c.offset for c in commits) == [workloads.TX_COMMITTED_OFFSET, workloads.TX_ABORTED_OFFSET]
    assert {c.metadata for c in commits} == {"tx"}


def test_read_offsets_topic_read_committed_skips_aborted_commit(
    kafka1: SandboxCluster, golden: GoldenRun
) -> None:
    snapshot = read_offsets_topic(kafka1.bootstrap_servers, isolation_level="read_committed")
    commits = [
        rec
        for _, rec in decoded_records(snapshot)
        if isinstance(rec, OffsetCommit) and rec.group == golden.workload.tx_group
    ]
    assert [c.offset for c in commits] == [workloads.TX_COMMITTED_OFFSET]


def test_decode_consumer_protocol_group_writes_types_3_to_8(golden: GoldenRun) -> None:
    records = _decoded(golden, golden.workload.consumer_group)
    live_types = {r.record_type for r in records if isinstance(r, ConsumerGroupRecord)}
    assert {3, 5, 6, 7, 8} <= live_types
    member_tombstones = {r.record_type for r in records if isinstance(r, GroupTombstone) and r.member_id}
    assert {5, 7, 8} <= member_tombstones  # members left the group


def test_decode_consumer_protocol_group_classic_member_and_revocation(golden: GoldenRun) -> None:
    records = _decoded(golden, golden.workload.consumer_group)
    classic = [
        r.classic_member_metadata
        for r in records
        if isinstance(r, ConsumerGroupMemberMetadata) and r.classic_member_metadata is not None
    ]
    assert classic, "the kafka-python member should be recorded with ClassicMemberMetadata"
    assert {p.name for p in classic[0].supported_protocols} >= {"range"}
    assert any(
        r.partitions_pending_revocation
        for r in records
        if isinstance(r, ConsumerGroupCurrentMemberAssignment)
    )


def test_decode_offset_delete_writes_tombstone_for_that_partition(golden: GoldenRun) -> None:
    w = golden.workload
    tombstones = [r for r in _decoded(golden, w.classic_group) if isinstance(r, OffsetCommitTombstone)]
    assert tombstones == [OffsetCommitTombstone(1, w.classic_group, w.topic, 0)]


def test_decode_delete_groups_writes_group_and_offset_tombstones(golden: GoldenRun) -> None:
    w = golden.workload
    classic = _decoded(golden, w.deleted_group)
    assert GroupTombstone(2, w.deleted_group) in classic
    assert {r.partition for r in classic if isinstance(r, OffsetCommitTombstone)} == {0, 1, 2, 3}
    consumer = _decoded(golden, w.consumer_group)
    assert GroupTombstone(3, w.consumer_group) in consumer
    assert {r.partition for r in consumer if isinstance(r, OffsetCommitTombstone)} == {0, 1, 2, 3}
