from __future__ import annotations

from typing import Any

from tests.truth.oracle import PartitionTruth, Truth
from tests.truth.verdict import Claim, partition_problems, problems

G, T = "g", "t"


def _truth(**kw: int) -> Truth:
    base = {"read": 100, "reread": 0, "lost": 0, "skipped": 0, "pending": 0, "scope": 100}
    base.update(kw)
    return Truth(G, T, 0, **base)


def _claim(
    kind: str, severity: str = "critical", cause: str = "x", partition: int | None = 0, **m: Any
) -> Claim:
    return Claim(kind, severity, cause, G, T, partition, m)


def test_problems_skip_claimed_after_a_reread_above_the_truth() -> None:
    found = problems(_truth(reread=100), [_claim("offset_skip", messages_skipped=30)])
    assert any("claims 30 never read" in p for p in found)


def test_problems_bounds_that_cover_the_truth_within() -> None:
    claim = _claim(
        "offset_skip", "warning", messages_skipped=0, messages_skipped_max=30, messages_replayed_max=100
    )
    assert problems(_truth(reread=100), [claim]) == []


def test_problems_bound_below_the_skipped_truth_fails() -> None:
    claim = _claim("offset_skip", "warning", messages_skipped=0, messages_skipped_max=10)
    assert any("bound" in p for p in problems(_truth(skipped=30), [claim]))


def test_problems_rewind_above_the_rereads_fails() -> None:
    assert problems(_truth(reread=100), [_claim("offset_rewind", messages_replayed=150)])


def test_problems_loss_without_a_finding_fails() -> None:
    found = problems(_truth(lost=200), [_claim("offsets_lost", "info", partition=None)])
    assert any("200 lost, no finding" in p for p in found)


def test_problems_loss_reported_by_below_log_start_within() -> None:
    claim = _claim("committed_below_log_start", messages_lost=200)
    assert problems(_truth(lost=200), [claim]) == []


def test_problems_page_about_a_clean_group_fails() -> None:
    found = problems(_truth(), [_claim("offsets_lost", cause="deleted_while_consuming", offsets_lost=1)])
    assert any("nothing was lost" in p for p in found)


def test_problems_info_about_a_clean_group_within() -> None:
    assert problems(_truth(), [_claim("offset_skip", "info", cause="admin_reset", messages_skipped=0)]) == []


def test_problems_other_groups_claims_ignored() -> None:
    other = Claim("offset_skip", "critical", "x", "other", T, 0, {"messages_skipped": 99})
    assert problems(_truth(), [other]) == []


def test_partition_problems_truncation_claimed_for_a_recreated_topic_fails() -> None:
    claim = Claim("log_truncation", "critical", "topic_recreated", None, T, 0, {"messages_truncated": 50})
    assert partition_problems(PartitionTruth(T, 0, truncated=0, deleted=50), [claim])


def test_partition_problems_truncation_within_the_cut() -> None:
    claim = Claim(
        "log_truncation", "critical", "unclean_leader_election", None, T, 0, {"messages_truncated": 50}
    )
    assert partition_problems(PartitionTruth(T, 0, truncated=50, deleted=0), [claim]) == []


def test_problems_bounded_warning_about_a_clean_group_within() -> None:
    claim = _claim(
        "offset_skip", "warning", messages_skipped=0, messages_skipped_max=39, messages_replayed_max=100
    )
    assert problems(_truth(), [claim]) == []


def test_problems_zero_bounded_warning_about_a_clean_group_fails() -> None:
    claim = _claim(
        "offset_skip", "warning", messages_skipped=0, messages_skipped_max=0, messages_replayed_max=0
    )
    assert problems(_truth(), [claim])
