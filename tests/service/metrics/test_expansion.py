"""The worker's expand: the inputs compact was given, with the objects of equal rows kept from the last
expand (and only those)."""

from __future__ import annotations

import dataclasses

from collectors.model import CommittedOffset, GroupInfo, PartitionOffsets
from service.metrics import ScrapeInputs
from service.metrics.expansion import Reuse, expand
from service.metrics.snapshot import compact
from tests.service.metrics import builders as b


def _inputs(cluster: b.ClusterInputs) -> ScrapeInputs:
    return ScrapeInputs(clusters=[cluster], log_end_times=b.FakeLogEndTimes(b.STORE_TIMES))


def _moved(cluster: b.ClusterInputs) -> b.ClusterInputs:
    """One commit moved, one group gone, one partition's log end moved."""
    assert cluster.committed and cluster.offsets and cluster.groups
    commits = list(cluster.committed.offsets)
    commits[1] = dataclasses.replace(commits[1], offset=60)
    parts = list(cluster.offsets.partitions)
    parts[0] = dataclasses.replace(parts[0], log_end=120)
    return dataclasses.replace(
        cluster,
        committed=dataclasses.replace(cluster.committed, observed_at=b.NOW + 4, offsets=tuple(commits)),
        offsets=dataclasses.replace(cluster.offsets, observed_at=b.NOW + 3, partitions=tuple(parts)),
        groups=dataclasses.replace(cluster.groups, groups=cluster.groups.groups[:2]),
    )


def test_a_kept_reuse_expands_what_a_fresh_one_does_reusing_only_equal_rows() -> None:
    reuse = Reuse()
    first = b.cluster_inputs()
    kept, _ = expand(compact(_inputs(first), b.NOW), reuse)
    assert kept == expand(compact(_inputs(first), b.NOW))[0]
    built_first = reuse.built

    second = _moved(first)
    again, now = expand(compact(_inputs(second), b.NOW + 5), reuse)
    fresh, _ = expand(compact(_inputs(second), b.NOW + 5))
    assert now == b.NOW + 5
    assert again == fresh
    assert again.clusters[0] == _inputs(second).clusters[0]  # the inputs themselves, back

    before, after = kept.clusters[0], again.clusters[0]
    assert before.committed and after.committed and before.offsets and after.offsets
    same = [x is y for x, y in zip(before.committed.offsets, after.committed.offsets, strict=True)]
    assert same == [True, False, True, True]
    assert after.committed.offsets[1] == CommittedOffset("billing", "orders", 1, 60, None)
    assert [x is y for x, y in zip(before.offsets.partitions, after.offsets.partitions, strict=True)] == [
        False,
        True,
        True,
    ]
    assert after.offsets.partitions[0] == PartitionOffsets("orders", 0, 10, 120, leader=1, leader_epoch=4)
    assert before.metadata is not after.metadata and before.metadata == after.metadata
    assert before.metadata and after.metadata and before.metadata.topics[0] is after.metadata.topics[0]
    assert 0 < reuse.built == 2 < built_first  # the moved commit and the moved log end


def test_rows_not_seen_in_the_last_expand_are_built_again() -> None:
    reuse = Reuse()
    first = b.cluster_inputs()
    kept, _ = expand(compact(_inputs(first), b.NOW), reuse)
    expand(compact(_inputs(_moved(first)), b.NOW), reuse)  # without the "idle" group
    back, _ = expand(compact(_inputs(first), b.NOW), reuse)
    assert back == kept
    before, after = kept.clusters[0].groups, back.clusters[0].groups
    assert before and after
    idle = [g for g in after.groups if g.group_id == "idle"]
    assert idle == [GroupInfo("idle", "classic", "Empty", "consumer", "")]
    assert idle[0] is not before.groups[2]  # forgotten when an expand did not see it: built again
    assert after.groups[0] is before.groups[0]
