"""Raw ``__consumer_offsets`` records of every type and version the codec knows, built with the test
encoder of the codec suite (written from Kafka's schemas, independently of either decoder)."""

from __future__ import annotations

import random

from tests.collectors.codec import encode as e

Pairs = list[tuple[bytes | None, bytes | None]]

TOPIC_ID = bytes(range(16))


def raw_corpus() -> list[tuple[bytes, bytes | None]]:
    """(key, value) pairs: commits v0–v5, tombstones, group metadata v0–v4, KIP-848, share, streams,
    an unknown type, unknown versions and corrupt bytes."""
    out: list[tuple[bytes, bytes | None]] = []
    key = e.offset_key("g-1", "orders", 3)
    for meta in ("", "x" * 126, "y" * 127, "é" * 150):
        out.append((key, e.offset_value(0, 10, meta, 1_700_000_000_000)))
        out.append((key, e.offset_value(1, 11, meta, 1_700_000_000_001, expire_timestamp=1_700_000_900_000)))
        out.append((key, e.offset_value(2, 12, meta, 1_700_000_000_002)))
        out.append((key, e.offset_value(3, 13, meta, 1_700_000_000_003, leader_epoch=7)))
        out.append((key, e.offset_value(3, -1, meta, 1_700_000_000_003, leader_epoch=-1)))
        out.append((key, e.offset_value(4, 14, meta, 1_700_000_000_004, leader_epoch=2)))
        out.append((key, e.offset_value(4, 15, meta, 1_700_000_000_005, topic_id=TOPIC_ID)))
        out.append(
            (key, e.offset_value(5, 16, meta, 1_700_000_000_006, topic_id=TOPIC_ID, extra_tags={3: b"z"}))
        )
        out.append((key, e.offset_value(5, 17, meta, 1_700_000_000_006, extra_tags={2: b"zz"})))
    out.append(
        (e.offset_key("legacy", "t", 0, record_type=0), e.offset_value(1, 5, "m", 1, expire_timestamp=2))
    )
    out.append((e.offset_key("g-1", "orders", 3), None))
    out.append((e.offset_key("g-1", "orders", 3), e.i16(-2) + b"\x00" * 20))  # unknown version
    out.append((e.offset_key("g-1", "orders", 3), e.i16(3) + b"\x00\x01"))  # truncated
    members = [e.Member("m-1", assignment=b""), e.Member("m-2", group_instance_id="static-2")]
    for version in range(5):
        out.append(
            (e.group_key(2, "classic"), e.group_value(version, e.Group(members=members, leader="m-1")))
        )
        out.append((e.group_key(2, "classic"), e.group_value(version, e.Group(protocol=None))))
    out.append((e.group_key(2, "classic"), None))
    out.append((e.group_key(3, "kip848"), e.cg_metadata_value(5, metadata_hash=99)))
    out.append((e.group_key(3, "kip848"), e.cg_metadata_value(6)))
    out.append((e.group_key(3, "kip848"), None))
    out.append((e.group_key(6, "kip848"), e.cg_target_assignment_metadata_value(4)))
    out.append(
        (e.group_key(7, "kip848", "member-a"), e.cg_target_assignment_member_value([(TOPIC_ID, [0, 1])]))
    )
    out.append((e.group_key(5, "kip848", "member-a"), None))
    out.append((e.group_key(16, "kip848", "top.*"), e.cg_regex_value(["topic-a"], 3, 1234)))
    out.append((e.group_key(10, "share", "member-s"), e.i16(0) + b"\x01\x02"))
    out.append((e.group_key(18, "streams"), e.i16(0) + b"\x03"))
    out.append((e.i16(99) + e.string("who"), e.i16(0)))  # unknown type
    out.append((b"\x00", b"\x00\x00"))  # truncated key
    return out


def broker_commits(n: int, seed: int = 3) -> Pairs:
    """Offset commits as brokers write them (v3, v4 with and without TopicId), tombstones, legacy keys."""
    rng = random.Random(seed)
    pairs: Pairs = []
    for i in range(n):
        key = e.offset_key(f"group-{rng.randrange(50)}", f"topic.{rng.randrange(9)}", rng.randrange(64))
        meta = "m" * rng.choice((0, 0, 5, 126))
        choice = rng.randrange(5)
        if choice == 0:
            pairs.append((key, None))
        elif choice == 1:
            pairs.append(
                (key, e.offset_value(3, i * 7, meta, 1_700_000_000_000 + i, leader_epoch=rng.choice((-1, 4))))
            )
        elif choice == 2:
            pairs.append((key, e.offset_value(4, i * 7, meta, 1_700_000_000_000 + i, leader_epoch=9)))
        elif choice == 3:
            tid = bytes(rng.randrange(256) for _ in range(16))
            pairs.append((key, e.offset_value(4, -i, meta, 1_700_000_000_000 + i, topic_id=tid)))
        else:
            legacy = e.offset_key("legacy", "t", i, record_type=0)
            pairs.append((legacy, e.offset_value(3, i, meta, 1_700_000_000_000 + i, leader_epoch=1)))
    return pairs
