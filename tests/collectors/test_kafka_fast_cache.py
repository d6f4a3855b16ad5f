"""WireCache: what is reused between cycles and what invalidates it."""

from __future__ import annotations

from collectors.kafka_fast_cache import WireCache
from collectors.model import CommittedOffset, TopicPartition

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
