"""Match every record a Kafka tool printed with our decoding of the same raw record, and diff them.

Tools run between two raw reads (``before``, ``after``) of ``__consumer_offsets``: a tool must have
seen everything ``before`` holds, and everything it printed must equal our decoding of ``after``'s
record at the same position. Records written while the tool ran (its own console-consumer group)
are thus compared when printed and tolerated when not.
"""

from __future__ import annotations

from collections import defaultdict

from collectors.codec import decode, partition_for
from collectors.kafka.offsets_topic import OffsetsTopicSnapshot, RawOffsetsRecord
from tests.collectors.codec.golden.kafka_json import Json, key_json, value_json
from tests.collectors.codec.golden.kafka_tools import DumpOutput


def rendered(raw: RawOffsetsRecord, *, decode_consumer_protocol: bool) -> Json:
    assert raw.key is not None, f"null key at {raw.partition}:{raw.offset}"
    record = decode(raw.key, raw.value, offset=raw.offset, partition=raw.partition)
    return {
        "key": key_json(record),
        "value": value_json(record, decode_consumer_protocol=decode_consumer_protocol),
    }


def record_type(raw: RawOffsetsRecord) -> int:
    assert raw.key is not None
    return int.from_bytes(raw.key[:2], "big", signed=True)


def diff_dump(dump: DumpOutput, before: OffsetsTopicSnapshot, after: OffsetsTopicSnapshot) -> list[str]:
    """Problems between DumpLogSegments (anchored by partition and offset) and our decoding."""
    problems = [f"{where}: DumpLogSegments printed no JSON: {line}" for where, line in dump.skipped.items()]
    ours = {(r.partition, r.offset): r for r in after.records}
    for where, printed in sorted(dump.records.items()):
        partition, offset = where
        if offset >= after.end_offsets[partition]:
            continue  # written after our second read; nothing to compare with
        raw = ours.get(where)
        if raw is None:
            problems.append(f"{where}: printed by DumpLogSegments, missing from our read: {printed}")
            continue
        expected = rendered(raw, decode_consumer_protocol=True)
        if expected != printed:
            problems.append(f"{where} DumpLogSegments vs ours: {field_diff(printed, expected)}")
    for raw in before.records:
        if (raw.partition, raw.offset) not in dump.records:
            problems.append(f"{(raw.partition, raw.offset)}: in our read, not printed by DumpLogSegments")
    return problems


def diff_formatter(
    printed: list[Json],
    types: frozenset[int],
    before: OffsetsTopicSnapshot,
    after: OffsetsTopicSnapshot,
) -> list[str]:
    """Problems between a console formatter's output and our decoding of the records of ``types``.

    The formatter prints no partition or offset, but one consumer reads each partition in order, so
    the printed records of partition p (located by ``partition_for`` of the printed key's group) must
    be, in order, a prefix of our records of p of those types at least as long as ``before``'s.
    """
    n = after.partition_count
    printed_by_partition: dict[int, list[Json]] = defaultdict(list)
    for obj in printed:
        printed_by_partition[partition_for(obj["key"]["data"]["group"], n)].append(obj)
    problems = []
    for p in range(n):
        ours = [r for r in after.records if r.partition == p and record_type(r) in types]
        at_least = sum(1 for r in before.records if r.partition == p and record_type(r) in types)
        got = printed_by_partition.get(p, [])
        if len(got) < at_least or len(got) > len(ours):
            problems.append(f"partition {p}: printed {len(got)} records, expected {at_least}..{len(ours)}")
        for raw, obj in zip(ours, got, strict=False):
            expected = rendered(raw, decode_consumer_protocol=False)
            if expected != obj:
                problems.append(f"({p}, {raw.offset}) formatter vs ours: {field_diff(obj, expected)}")
    return problems


def field_diff(kafka: object, ours: object, path: str = "") -> list[str]:
    """The leaf paths where two JSON values differ, as ``path: kafka=.. ours=..``."""
    if isinstance(kafka, dict) and isinstance(ours, dict):
        return [
            d
            for name in sorted(kafka.keys() | ours.keys())
            for d in field_diff(kafka.get(name, "<absent>"), ours.get(name, "<absent>"), f"{path}.{name}")
        ]
    if isinstance(kafka, list) and isinstance(ours, list) and len(kafka) == len(ours):
        return [
            d
            for i, (k, o) in enumerate(zip(kafka, ours, strict=True))
            for d in field_diff(k, o, f"{path}[{i}]")
        ]
    return [] if kafka == ours else [f"{path or '.'}: kafka={kafka!r} ours={ours!r}"]


def decoded_records(snapshot: OffsetsTopicSnapshot) -> list[tuple[RawOffsetsRecord, object]]:
    return [
        (raw, decode(raw.key, raw.value, offset=raw.offset, partition=raw.partition))
        for raw in snapshot.records
        if raw.key is not None
    ]
