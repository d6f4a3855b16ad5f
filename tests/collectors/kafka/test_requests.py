"""collectors.kafka.requests.list_offsets over a fake connection manager: the ranges of a leader's two
answers, merged whole or, with the seam's cache, by what changed since its last complete answers."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from kafka.protocol.consumer import ListOffsetsResponse

from collectors.kafka import requests as rq
from collectors.kafka.fast_cache import WireCache
from collectors.kafka.fast_io import RawResponse
from collectors.model import TopicPartition
from collectors.seam import OffsetRange
from tests.collectors import kafka_samples

TP = TopicPartition
ASKED = tuple(TP(t, p) for t in ("a", "b") for p in range(4))
Answer = dict[str, list[tuple[int, int, int, int]]]  # topic -> (partition, error, offset, epoch)


class Manager:
    """Answers each leader's EARLIEST then LATEST request (list_offsets sends them in that order)."""

    def __init__(self) -> None:
        self.answers: list[bytes] = []

    def send(self, request: Any, node_id: int | None) -> asyncio.Future[RawResponse]:
        future: asyncio.Future[RawResponse] = asyncio.get_running_loop().create_future()
        future.set_result(RawResponse(ListOffsetsResponse[10], 10, self.answers.pop(0)))
        return future


def _answer(offsets: dict[TopicPartition, tuple[int, int]], error: TopicPartition | None = None) -> bytes:
    topics: Answer = {}
    for tp, (offset, epoch) in offsets.items():
        code = 6 if tp == error else 0  # NOT_LEADER_OR_FOLLOWER
        topics.setdefault(tp.topic, []).append((tp.partition, code, -1 if code else offset, epoch))
    return kafka_samples.list_offsets(topics)


def _list(
    starts: dict[TopicPartition, tuple[int, int]],
    ends: dict[TopicPartition, tuple[int, int]],
    wire: WireCache | None,
    asked: tuple[TopicPartition, ...] = ASKED,
    error: TopicPartition | None = None,
) -> tuple[dict[TopicPartition, OffsetRange], dict[TopicPartition, Any]]:
    manager = Manager()
    manager.answers = [_answer(starts), _answer(ends, error)]
    return asyncio.run(rq.list_offsets(manager, "c", 1, asked, 1000, wire))


def test_list_offsets_moved_end_merged_by_change_unchanged_ranges_kept() -> None:
    wire = WireCache()
    starts = {tp: (0, 3) for tp in ASKED}
    ends = {tp: (10 + i, 3) for i, tp in enumerate(ASKED)}
    first, errors = _list(starts, ends, wire)
    assert errors == {} and first[TP("a", 0)] == OffsetRange(0, 10, 3)

    ends[TP("b", 1)] = (99, 4)
    second, errors = _list(starts, ends, wire)

    assert errors == {} and second == {tp: OffsetRange(0, ends[tp][0], ends[tp][1]) for tp in ASKED}
    assert second is not first and all(second[tp] is first[tp] for tp in ASKED if tp != TP("b", 1))
    assert [type(k) for k in second] == [TopicPartition] * len(ASKED)  # the asked keys, not decoded ones


def test_list_offsets_partition_missing_or_failing_is_merged_whole() -> None:
    wire = WireCache()
    starts = {tp: (0, 3) for tp in ASKED}
    ends = {tp: (10, 3) for tp in ASKED}
    _list(starts, ends, wire)

    missing = {tp: v for tp, v in ends.items() if tp != TP("a", 2)}
    ranges, errors = _list(starts, missing, wire)
    assert TP("a", 2) not in ranges and list(errors) == [TP("a", 2)]

    ranges, errors = _list(starts, ends, wire, error=TP("b", 3))
    assert TP("b", 3) not in ranges and list(errors) == [TP("b", 3)] and len(ranges) == len(ASKED) - 1

    other = (*ASKED[:-1],)  # another partition set (a leadership change): merged whole
    ranges, errors = _list(starts, ends, wire, asked=other)
    assert set(ranges) == set(other) and errors == {}


def test_list_offsets_with_cache_equals_merged_whole_over_random_answers() -> None:
    rng = random.Random(7)
    wire = WireCache()
    starts = {tp: (0, 0) for tp in ASKED}
    ends = {tp: (5, 0) for tp in ASKED}
    for _ in range(200):
        for tp in rng.sample(ASKED, rng.randint(0, 3)):
            ends[tp] = (ends[tp][0] + rng.randint(0, 2), ends[tp][1] + rng.choice((0, 0, 1)))
        if rng.random() < 0.2:
            tp = rng.choice(ASKED)
            starts[tp] = (min(starts[tp][0] + 1, ends[tp][0]), starts[tp][1])
        missing = rng.choice((None, None, None, rng.choice(ASKED)))
        error = rng.choice((None, None, None, rng.choice(ASKED)))
        said = {tp: v for tp, v in ends.items() if tp != missing}
        cached = _list(starts, said, wire, error=error)
        whole = _list(starts, said, None, error=error)
        assert cached[0] == whole[0]
        assert list(cached[1]) == list(whole[1])
