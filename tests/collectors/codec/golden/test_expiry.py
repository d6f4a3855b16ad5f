"""Offset expiry (KIP-211) on a sandbox with offsets.retention.minutes=1: the tombstone it writes.

A group with no members (an admin commit, as an ``assign()`` consumer's) expires ``retention`` after
its commit timestamp. The commit is made when the session starts (``early_standalone_commit``, see
:mod:`tests.support.expiry`), so its minute passes while the tests before this one run; alone, this test
waits about 60–65 s.
"""

from __future__ import annotations

import time

import pytest

from collectors.codec import OffsetCommit, OffsetCommitTombstone, partition_for
from collectors.kafka.offsets_topic import read_offsets_topic
from sandbox.cluster import SandboxCluster
from tests.collectors.codec.golden.compare import decoded_records, diff_dump
from tests.collectors.codec.golden.kafka_tools import dump_log_segments
from tests.support.expiry import RETENTION_MS, StandaloneCommit

pytestmark = [
    pytest.mark.integration,
    pytest.mark.apart,
]  # mostly waiting: beside the others (tests/parallel.py)

WAIT_S = 150  # after the commit


def test_decode_expired_offset_is_tombstone_for_that_group_topic_partition(
    kafka_expiry: SandboxCluster, early_standalone_commit: StandaloneCommit
) -> None:
    bootstrap = kafka_expiry.bootstrap_servers
    early = early_standalone_commit
    topic, group = early.topic, early.group

    deadline = early.at + WAIT_S
    while True:
        snapshot = read_offsets_topic(bootstrap)
        mine = [(raw, rec) for raw, rec in decoded_records(snapshot) if getattr(rec, "group", None) == group]
        tombstones = [(raw, rec) for raw, rec in mine if isinstance(rec, OffsetCommitTombstone)]
        if tombstones or time.monotonic() > deadline:
            break
        time.sleep(1)

    assert [rec for _, rec in tombstones] == [OffsetCommitTombstone(1, group, topic, 1)]
    commits = [(raw, rec) for raw, rec in mine if isinstance(rec, OffsetCommit)]
    assert [(rec.partition, rec.offset) for _, rec in commits] == [(1, 7)]
    (commit_raw, commit), (tomb_raw, _) = commits[0], tombstones[0]
    # Same __consumer_offsets partition, after the commit, and only once the retention had passed.
    assert tomb_raw.partition == commit_raw.partition == partition_for(group, snapshot.partition_count)
    assert tomb_raw.offset > commit_raw.offset
    assert tomb_raw.timestamp - commit.commit_timestamp >= RETENTION_MS
    # Kafka's own decoder agrees on every record of this sandbox, the tombstone included.
    before = read_offsets_topic(bootstrap, isolation_level="read_uncommitted")
    dump = dump_log_segments(kafka_expiry)
    after = read_offsets_topic(bootstrap, isolation_level="read_uncommitted")
    assert dump.records[(tomb_raw.partition, tomb_raw.offset)]["value"] is None
    assert diff_dump(dump, before, after) == []
