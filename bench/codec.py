"""Offset-commit decode rate of ``collectors.codec.decode`` (records/s), in-process.

Run: ``.venv/bin/python -m bench.codec [--records N]``. Prints one line per value layout; no I/O.
"""

from __future__ import annotations

import argparse
import struct
import time

from collectors.codec import decode, partition_for


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _string(s: str, flexible: bool = False) -> bytes:
    raw = s.encode()
    return (_uvarint(len(raw) + 1) if flexible else struct.pack(">h", len(raw))) + raw


def _records(n: int, version: int, topic_id: bool, metadata: str) -> list[tuple[bytes, bytes]]:
    """Realistic commits: 200 groups x 50 partitions, cycled."""
    out = []
    for i in range(n):
        key = struct.pack(">h", 1) + _string(f"orders-consumer-{i % 200}") + _string("orders.v1")
        key += struct.pack(">i", i % 50)
        if version == 1:  # not on the fast path: measures the general Reader path
            value = struct.pack(">hq", 1, 1_000_000 + i) + _string(metadata)
            value += struct.pack(">qq", 1_760_000_000_000 + i, 1_760_000_600_000 + i)
        elif version == 3:
            value = struct.pack(">hqi", 3, 1_000_000 + i, 7) + _string(metadata)
            value += struct.pack(">q", 1_760_000_000_000 + i)
        else:
            value = struct.pack(">hqi", 4, 1_000_000 + i, 7) + _string(metadata, True)
            value += struct.pack(">q", 1_760_000_000_000 + i)
            value += b"\x01\x00\x10" + bytes(range(16)) if topic_id else b"\x00"
        out.append((key, value))
    return out


def _rate(records: list[tuple[bytes, bytes]], rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for key, value in records:
            decode(key, value)
        best = min(best, time.perf_counter() - start)
    return len(records) / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=200_000)
    args = parser.parse_args()
    cases = [
        ("v3 (brokers < 4.1)", 3, False, ""),
        ("v4 no tags", 4, False, ""),
        ("v4 + TopicId tag (4.1)", 4, True, ""),
        ("v4 + TopicId, 300-byte metadata", 4, True, "m" * 300),
        ("v1 (general path, for comparison)", 1, False, ""),
    ]
    for label, version, topic_id, metadata in cases:
        rate = _rate(_records(args.records, version, topic_id, metadata))
        print(f"decode {label:34s} {rate:>12,.0f} records/s")
    groups = [f"orders-consumer-{i % 200}" for i in range(args.records)]
    start = time.perf_counter()
    for g in groups:
        partition_for(g, 50)
    rate = args.records / (time.perf_counter() - start)
    print(f"partition_for (cached, 200 groups)        {rate:>12,.0f} calls/s")


if __name__ == "__main__":
    main()
