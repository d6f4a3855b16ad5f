from __future__ import annotations

from tests.truth.oracle import partition_truths, truths
from tests.truth.records import Acked, Read

G, T = "g", "t"


def _acked(n: int, start: int = 0, topic_id: str = "id1", at: float = 1.0, tag: str = "m") -> list[Acked]:
    return [Acked(T, topic_id, 0, start + i, f"{tag}{start + i}", at) for i in range(n)]


def _reads(payloads: list[str]) -> list[Read]:
    return [Read(G, T, 0, i, p, "kafka-python", 2.0 + i) for i, p in enumerate(payloads)]


def _one(acked: list[Acked], reads: list[Read], held: list[str], committed: int | None, start: float = 0.0):
    return truths(acked, reads, held, {(G, T, 0): committed}, {(G, T, 0): start})[(G, T, 0)]


def test_truths_read_once_each_clean() -> None:
    acked = _acked(10)
    t = _one(acked, _reads([a.payload for a in acked]), [a.payload for a in acked], 10)
    assert (t.read, t.reread, t.lost, t.skipped, t.pending, t.clean) == (10, 0, 0, 0, 0, True)


def test_truths_reset_to_start_after_truncation_counts_rereads_not_skips() -> None:
    kept = _acked(100)  # 0..99 kept; 100..149 truncated; 30 new at 100..129
    truncated = _acked(50, start=100, tag="old")
    fresh = _acked(30, start=100, tag="new", at=5.0)
    first = [a.payload for a in kept + truncated]
    again = [a.payload for a in kept + fresh]
    t = _one(kept + truncated + fresh, _reads(first + again), [a.payload for a in kept + fresh], 130)
    assert (t.reread, t.skipped, t.lost) == (100, 0, 0)


def test_truths_reset_to_latest_over_retained_messages_skipped() -> None:
    acked = _acked(100)
    read = [a.payload for a in acked[:20]]
    held = [a.payload for a in acked[50:]]  # 0..49 deleted by retention
    t = _one(acked, _reads(read), held, 100)
    assert (t.lost, t.skipped, t.pending, t.reread) == (30, 50, 0, 0)


def test_truths_unread_above_the_commit_pending_not_skipped() -> None:
    acked = _acked(10)
    t = _one(acked, _reads([a.payload for a in acked[:4]]), [a.payload for a in acked], 4)
    assert (t.skipped, t.pending) == (0, 6)


def test_truths_messages_before_the_groups_start_out_of_scope() -> None:
    early = _acked(10, at=1.0)
    late = _acked(5, start=10, at=9.0)
    t = _one(early + late, _reads([a.payload for a in late]), [], 15, start=5.0)
    assert (t.scope, t.lost, t.read) == (5, 0, 5)


def test_truths_messages_after_the_groups_end_out_of_scope() -> None:
    # a deleted group: what came after is no longer its to read (retention deleting it is no loss of its)
    read = _acked(10, at=1.0)
    after = _acked(5, start=10, at=9.0)
    key = (G, T, 0)
    t = truths(read + after, _reads([a.payload for a in read]), [], {key: None}, {key: 0.0}, {key: 5.0})[key]
    assert (t.scope, t.lost, t.read, t.clean) == (10, 0, 10, True)


def test_truths_old_incarnation_unread_is_lost_not_skipped() -> None:
    old = _acked(10, topic_id="id1", tag="old")
    new = _acked(5, topic_id="id2", at=5.0, tag="new")
    reads = _reads([a.payload for a in old[:6]] + [a.payload for a in new])
    t = _one(old + new, reads, [a.payload for a in new], 5)
    assert (t.lost, t.skipped, t.pending) == (4, 0, 0)


def test_partition_truths_cut_from_the_end_truncated() -> None:
    kept, cut = _acked(100), _acked(50, start=100, tag="old")
    fresh = _acked(30, start=100, tag="new", at=5.0)
    held = [a.payload for a in kept + fresh]
    [t] = partition_truths(kept + cut + fresh, held, {T: "id1"}).values()
    assert (t.truncated, t.deleted) == (50, 0)


def test_partition_truths_retention_from_the_start_not_truncated() -> None:
    acked = _acked(100)
    [t] = partition_truths(acked, [a.payload for a in acked[70:]], {T: "id1"}).values()
    assert (t.truncated, t.deleted) == (0, 0)


def test_partition_truths_topic_recreated_deleted_not_truncated() -> None:
    old, new = _acked(50, topic_id="id1", tag="old"), _acked(5, topic_id="id2", tag="new", at=5.0)
    [t] = partition_truths(old + new, [a.payload for a in new], {T: "id2"}).values()
    assert (t.truncated, t.deleted) == (0, 50)
