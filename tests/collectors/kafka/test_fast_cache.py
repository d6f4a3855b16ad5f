"""WireCache: what is reused between cycles and what invalidates it."""

from __future__ import annotations

from kafka.protocol.consumer import ListOffsetsResponse

from collectors.kafka.fast_cache import WireCache
from collectors.kafka.fast_io import RawResponse
from collectors.kafka.requests import _listed
from collectors.model import CommittedOffset, TopicPartition
from tests.collectors import kafka_samples

TP = TopicPartition
LED = (TP("a", 0), TP("a", 1))


def _body(
    cache: WireCache, partitions: tuple[TopicPartition, ...], version: int = 10, leader: int = 1
) -> bytes:
    encoded = f"{leader}:{partitions}:{version}".encode()
    return cache.list_offsets_body(leader, -1, partitions, 30_000, version, lambda: encoded + b"!")


def test_list_offsets_body_same_request_encoded_once() -> None:
    cache = WireCache()
    first = _body(cache, LED)

    again = cache.list_offsets_body(1, -1, tuple(LED), 30_000, 10, lambda: b"re-encoded")

    assert again is first


def test_list_offsets_body_leadership_change_reencodes() -> None:
    cache = WireCache()
    _body(cache, LED)

    moved = _body(cache, (TP("a", 0),))  # partition 1 moved to another leader

    assert moved == b"1:(TopicPartition(topic='a', partition=0),):10!"


def test_list_offsets_body_other_version_timeout_or_leader_reencodes() -> None:
    cache = WireCache()
    _body(cache, LED)

    assert _body(cache, LED, version=9).endswith(b":9!")
    assert cache.list_offsets_body(1, -1, LED, 5, 9, lambda: b"timeout changed") == b"timeout changed"
    assert _body(cache, LED, leader=2).startswith(b"2:")


def test_keep_groups_batch_replaces_retry_adds() -> None:
    cache = WireCache()
    offsets = [CommittedOffset("g", "t", 0, 1, None)]
    cache.keep_groups(1, {"gone": (b"x", []), "g": (b"y", offsets)}, whole=True)

    cache.keep_groups(1, {"g": (b"y", offsets)}, whole=True)
    cache.keep_groups(1, {"retried": (b"z", [])}, whole=False)

    assert set(cache.groups(1)) == {"g", "retried"}
    assert cache.groups(2) == {}


def _answer(parts: list[tuple[int, int, int, int]]) -> RawResponse:
    return RawResponse(ListOffsetsResponse[10], 10, kafka_samples.list_offsets({"a": parts}, version=10))


def test_list_offsets_answer_same_bytes_decoded_once() -> None:
    cache = WireCache()
    first, errors = _listed(cache, 1, -2, _answer([(0, 0, 5, 1), (1, 0, 7, 1)]), "c")
    assert dict(first) == {("a", 0): (5, 1), ("a", 1): (7, 1)} and errors == {}

    again, _ = _listed(cache, 1, -2, _answer([(0, 0, 5, 1), (1, 0, 7, 1)]), "c")
    moved, _ = _listed(cache, 1, -2, _answer([(0, 0, 6, 1), (1, 0, 7, 1)]), "c")
    other_leader, _ = _listed(cache, 2, -2, _answer([(0, 0, 6, 1), (1, 0, 7, 1)]), "c")

    assert again is first  # the same bytes: not decoded again
    assert dict(moved) == {("a", 0): (6, 1), ("a", 1): (7, 1)}
    assert other_leader is not moved


def test_list_offsets_answer_with_an_error_not_kept() -> None:
    cache = WireCache()
    failing = [(0, 0, 5, 1), (1, 6, -1, -1)]  # NOT_LEADER_OR_FOLLOWER on partition 1
    _, errors = _listed(cache, 1, -1, _answer(failing), "c")
    again, errors_again = _listed(cache, 1, -1, _answer(failing), "c")

    assert list(errors) == list(errors_again) == [TP("a", 1)]
    assert errors_again is not errors and dict(again) == {("a", 0): (5, 1)}
