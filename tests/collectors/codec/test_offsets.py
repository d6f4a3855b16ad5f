"""Offset commits: keys of types 0/1, values v0–v5, the fast path and the general path agreeing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collectors.codec import OffsetCommit, OffsetCommitTombstone, UnknownRecord, decode
from collectors.codec.offsets import decode_commit, decode_value
from collectors.errors import DecodeError

from . import encode as e

TOPIC_ID = bytes(range(16))
TOPIC_ID_TEXT = "AAECAwQFBgcICQoLDA0ODw"
KEY = e.offset_key("billing", "orders", 7)


def _expected(version: int, **overrides: object) -> OffsetCommit:
    fields: dict[str, object] = {
        "record_type": 1,
        "group": "billing",
        "topic": "orders",
        "partition": 7,
        "version": version,
        "offset": 1234,
        "leader_epoch": 5 if version >= 3 else None,
        "metadata": "meta",
        "commit_timestamp": 1_700_000_000_000,
        "expire_timestamp": 1_700_000_600_000 if version == 1 else None,
        "topic_id": None,
    }
    fields.update(overrides)
    return OffsetCommit(**fields)  # type: ignore[arg-type]


def _value(version: int, **kwargs: object) -> bytes:
    args: dict[str, object] = {
        "leader_epoch": 5,
        "expire_timestamp": 1_700_000_600_000,
    }
    args.update(kwargs)
    return e.offset_value(version, 1234, "meta", 1_700_000_000_000, **args)  # type: ignore[arg-type]


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4, 5])
def test_decode_offset_commit_each_version_decodes_its_fields(version: int) -> None:
    assert decode(KEY, _value(version)) == _expected(version)


def test_decode_offset_commit_version_5_reads_as_flexible_v4_layout() -> None:
    value = _value(5, topic_id=TOPIC_ID, extra_tags={9: b"future"})
    assert decode(KEY, value) == _expected(5, topic_id=TOPIC_ID_TEXT)


def test_decode_legacy_type_0_key_keeps_its_record_type() -> None:
    key = e.offset_key("billing", "orders", 7, record_type=0)
    assert decode(key, _value(0)) == _expected(0, record_type=0)


@pytest.mark.parametrize("version", [3, 4])
def test_decode_leader_epoch_minus_one_is_none(version: int) -> None:
    assert decode(KEY, _value(version, leader_epoch=-1)).leader_epoch is None  # type: ignore[union-attr]


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("length", [0, 126, 127, 300])
def test_decode_metadata_of_length_decodes_whole(version: int, length: int) -> None:
    # 127+ bytes need a two-byte varint in v4+ (Burrow reads one byte and breaks).
    metadata = "m" * length
    value = e.offset_value(version, 1, metadata, 2, topic_id=TOPIC_ID)
    record = decode(KEY, value)
    assert isinstance(record, OffsetCommit)
    assert record.metadata == metadata
    assert record.commit_timestamp == 2


def test_decode_multibyte_utf8_metadata_decodes() -> None:
    value = e.offset_value(4, 1, "中文é😀" * 40, 2)
    assert decode(KEY, value).metadata == "中文é😀" * 40  # type: ignore[union-attr]


def test_decode_topic_id_tag_is_kept_and_unknown_tags_skipped() -> None:
    value = _value(4, topic_id=TOPIC_ID, extra_tags={1: b"\xff" * 3, 42: b""})
    assert decode(KEY, value) == _expected(4, topic_id=TOPIC_ID_TEXT)


def test_decode_only_unknown_tags_leaves_topic_id_none() -> None:
    assert decode(KEY, _value(4, extra_tags={3: b"abc"})) == _expected(4)


def test_decode_topic_id_tag_of_wrong_size_is_decode_error() -> None:
    with pytest.raises(DecodeError, match="TopicId tag of 4 bytes"):
        decode(KEY, _value(4, extra_tags={0: b"abcd"}), offset=11)


@pytest.mark.parametrize("record_type", [0, 1])
def test_decode_null_value_is_offset_tombstone(record_type: int) -> None:
    key = e.offset_key("billing", "orders", 7, record_type)
    assert decode(key, None) == OffsetCommitTombstone(record_type, "billing", "orders", 7)


def test_decode_negative_value_version_is_unknown_record() -> None:
    value = e.i16(-3) + b"\x00" * 20
    assert decode(KEY, value) == UnknownRecord(1, -3, KEY, value)


def test_decode_trailing_bytes_are_ignored_like_kafka() -> None:
    assert decode(KEY + b"junk", _value(3) + b"junk") == _expected(3)


def test_decode_accepts_bytearray_and_memoryview() -> None:
    assert decode(bytearray(KEY), memoryview(_value(4))) == _expected(4)  # type: ignore[arg-type]


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4, 5])
def test_decode_truncated_commit_at_every_cut_is_decode_error_with_offset(version: int) -> None:
    value = e.offset_value(version, 9, "x" * 130, 3, topic_id=TOPIC_ID)
    for cut in range(len(KEY)):
        with pytest.raises(DecodeError) as info:
            decode(KEY[:cut], value, offset=42, partition=3)
        assert (info.value.offset, info.value.partition) == (42, 3)
    for cut in range(len(value)):
        with pytest.raises(DecodeError) as info:
            decode(KEY, value[:cut], offset=43, partition=4)
        assert (info.value.offset, info.value.partition) == (43, 4)


def test_decode_negative_group_length_is_decode_error() -> None:
    key = e.i16(1) + e.i16(-1) + e.string("orders") + e.i32(0)
    with pytest.raises(DecodeError, match="null in a non-nullable"):
        decode(key, _value(3))


def test_decode_commit_fast_path_declines_what_it_does_not_handle() -> None:
    assert decode_commit(KEY, _value(2)) is None
    assert decode_commit(KEY, _value(4, extra_tags={5: b"x"})) is None
    assert decode_commit(KEY, _value(3)) == _expected(3)


_texts = st.text(max_size=200)
_int32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
_int64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@given(
    version=st.integers(min_value=0, max_value=6),
    group=_texts,
    topic=_texts,
    partition=_int32,
    offset=_int64,
    metadata=st.text(max_size=400),
    commit_ts=_int64,
    epoch=_int32,
    expire_ts=_int64,
    topic_id=st.none() | st.binary(min_size=16, max_size=16),
    extra=st.dictionaries(st.integers(min_value=1, max_value=300), st.binary(max_size=20), max_size=3),
)
def test_decode_encoded_commit_round_trips(
    version: int,
    group: str,
    topic: str,
    partition: int,
    offset: int,
    metadata: str,
    commit_ts: int,
    epoch: int,
    expire_ts: int,
    topic_id: bytes | None,
    extra: dict[int, bytes],
) -> None:
    key = e.offset_key(group, topic, partition)
    value = e.offset_value(
        version,
        offset,
        metadata,
        commit_ts,
        leader_epoch=epoch,
        expire_timestamp=expire_ts,
        topic_id=topic_id,
        extra_tags=extra,
    )
    record = decode(key, value)
    assert isinstance(record, OffsetCommit)
    assert (record.group, record.topic, record.partition) == (group, topic, partition)
    assert (record.version, record.offset, record.metadata, record.commit_timestamp) == (
        version,
        offset,
        metadata,
        commit_ts,
    )
    assert record.leader_epoch == (None if version < 3 or epoch == -1 else epoch)
    assert record.expire_timestamp == (expire_ts if version == 1 else None)
    assert (record.topic_id is not None) == (version >= 4 and topic_id is not None)
    # The general path must agree with whatever the fast path produced.
    general = decode_value(1, group, topic, partition, version, value)
    assert general == record


@pytest.mark.parametrize("version", [3, 4])
def test_decode_commit_names_are_one_copy_per_name(version: int) -> None:
    """The tail reads the same group and topic names in every commit: each is kept once (interned)."""
    group, topic = "".join(["bill", "ing"]), "".join(["ord", "ers"])  # built at run time, not constants
    first = decode_commit(e.offset_key(group, topic, 1), _value(version))
    second = decode_commit(e.offset_key(group, topic, 2), _value(version))
    assert first is not None and second is not None
    assert first.group is second.group and first.topic is second.topic
