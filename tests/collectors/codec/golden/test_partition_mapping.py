"""``partition_for`` against the broker: where do commits of non-ASCII group ids really land?

Java hashes UTF-16 code units, so characters outside the BMP count as two surrogates; "emoji-😀-𝄞"
and "🚀rocket" land in a different partition (of 10) than a code-point hash would put them in.
"""

from __future__ import annotations

import pytest

from collectors.codec import OffsetCommit, partition_for
from collectors.kafka.offsets_topic import read_offsets_topic
from sandbox.cluster import SandboxCluster
from tests.collectors.codec.golden import workloads
from tests.collectors.codec.golden.compare import decoded_records

pytestmark = pytest.mark.integration

GROUPS = ("grüße-✓", "组-消费者", "emoji-😀-𝄞", "🚀rocket")


@pytest.fixture(scope="module")
def committed(kafka1: SandboxCluster) -> tuple[str, str]:
    """Each group of GROUPS (with a unique suffix) commits offset 1 of a fresh topic; name → group."""
    topic = workloads.unique("golden-unicode")
    workloads.create_topic(kafka1.bootstrap_servers, topic, 1)
    suffix = workloads.unique("")
    for group in GROUPS:
        workloads.standalone_commit(kafka1.bootstrap_servers, topic, group + suffix, 0, 1)
    return topic, suffix


@pytest.mark.parametrize("group", GROUPS)
def test_partition_for_non_ascii_group_commit_lands_in_computed_partition(
    kafka1: SandboxCluster, committed: tuple[str, str], group: str
) -> None:
    topic, suffix = committed
    group_id = group + suffix
    snapshot = read_offsets_topic(kafka1.bootstrap_servers)
    landed = {
        raw.partition
        for raw, rec in decoded_records(snapshot)
        if isinstance(rec, OffsetCommit) and rec.group == group_id and rec.topic == topic
    }
    assert landed == {partition_for(group_id, snapshot.partition_count)}
