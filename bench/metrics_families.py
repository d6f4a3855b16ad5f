"""bench/metrics_families: series and body bytes of ``/metrics`` per family selection and granularity.

Builds bench/service's fleet in memory, as bench/poll's populate leaves it: ``--topics`` topics of 100
partitions plus 10 of ``__consumer_offsets`` (20,010 partitions by default), ``--groups`` groups each
committed at offset 1 on ``--per-group`` consecutive partitions (50,000 group-partitions), log ends
1..3, groups without members, three brokers, one cluster ``bench``. Every lagging row has a lag in
seconds (a stand-in history knows each crossing). For each family selection (every subset of the three
sets: offsetguard's own is the default, none leaves the health and alert families) and each granularity it
renders the registry the app factory builds, as plain text and as OpenMetrics, and counts series and
bytes (and the gzipped text Prometheus receives on the wire).

    .venv/bin/python -m bench.metrics_families [--topics 200] [--groups 2000] [--per-group 25]   # ~1 min

Prints a table and writes bench/results/metrics_families.json.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import re
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from itertools import combinations
from pathlib import Path
from typing import Any

from collectors.model import (
    Broker,
    ClusterMetadata,
    CommittedObservation,
    CommittedOffset,
    GroupInfo,
    GroupsObservation,
    OffsetsObservation,
    PartitionInfo,
    PartitionOffsets,
    TopicInfo,
)
from service.metrics import (
    FAMILY_SETS,
    GRANULARITIES,
    ClusterInputs,
    FamilySet,
    MetricsOptions,
    ScrapeInputs,
    build_registry,
    render,
)
from service.metrics.exposition import gzip_compressor
from service.metrics.options import DEFAULT_FAMILIES

RESULTS = Path(__file__).resolve().parent / "results"
CLUSTER = "bench"
PARTITIONS_PER_TOPIC = 100
OFFSETS_TOPIC_PARTITIONS = 10
OPENMETRICS = "application/openmetrics-text; version=1.0.0"
KMINION_BODY_BYTES = 10_600_000  # kminion's body for this fleet (issue 12), the reference, not measured here


class KnownCrossings:
    """Every log-end crossing the lagging rows ask for happened a minute before ``now``."""

    def __init__(self, now: float) -> None:
        self.now = now

    def log_end_reached_at_many(
        self, cluster: str, wanted: Iterable[tuple[str, int, int]]
    ) -> Mapping[tuple[str, int, int], float]:
        return dict.fromkeys(wanted, self.now - 60.0)


def fleet(topics: int, groups: int, per_group: int, now: float) -> ClusterInputs:
    names = [f"bench-{i:04d}" for i in range(topics)]
    parts = [(n, p) for n in names for p in range(PARTITIONS_PER_TOPIC)]
    co = "__consumer_offsets"
    infos = [
        TopicInfo(n, False, tuple(PartitionInfo(n, p, 1 + p % 3, 1, (1 + p % 3,), (1 + p % 3,)) for p in r))
        for n, r in ((n, range(PARTITIONS_PER_TOPIC)) for n in names)
    ]
    infos.append(
        TopicInfo(
            co, True, tuple(PartitionInfo(co, p, 1, 1, (1,), (1,)) for p in range(OFFSETS_TOPIC_PARTITIONS))
        )
    )
    brokers = tuple(Broker(i, f"broker-{i}", 9092) for i in (1, 2, 3))
    meta = ClusterMetadata(CLUSTER, now, "bench-id", 1, brokers, tuple(infos))
    offsets = [PartitionOffsets(n, p, 0, 1 + p % 3, 1 + p % 3, 1) for n, p in parts]
    offsets += [PartitionOffsets(co, p, 0, 1000, 1, 1) for p in range(OFFSETS_TOPIC_PARTITIONS)]
    commits = [
        CommittedOffset(f"bench-group-{g:05d}", *parts[(g * per_group + k) % len(parts)], 1, None)
        for g in range(groups)
        for k in range(per_group)
    ]
    ids = tuple(f"bench-group-{g:05d}" for g in range(groups))
    return ClusterInputs(
        CLUSTER,
        meta,
        OffsetsObservation(CLUSTER, now, tuple(offsets)),
        GroupsObservation(CLUSTER, now, tuple(GroupInfo(i, "classic", "Empty", "consumer", "") for i in ids)),
        CommittedObservation(CLUSTER, now, tuple(commits), ids),
    )


def by_family(body: bytes) -> dict[str, dict[str, int]]:
    """Series and bytes (comment lines included) per family of a plain-text body."""
    series: collections.Counter[str] = collections.Counter()
    size: collections.Counter[str] = collections.Counter()
    for line in body.splitlines(keepends=True):
        if line.startswith(b"#"):
            name = line.split(b" ", 3)[2].decode()
        else:
            name = line.split(b"{", 1)[0].split(b" ", 1)[0].decode()
            series[name] += 1
        size[name] += len(line)
    return {n: {"series": series[n], "bytes": size[n]} for n in sorted(size, key=lambda n: -size[n])}


def _gzipped(text: bytes) -> bytes:
    compressor = gzip_compressor()
    return compressor.compress(text) + compressor.flush()


def measure(inputs: ScrapeInputs, now: float, options: MetricsOptions) -> dict[str, Any]:
    registry = build_registry(lambda: inputs, clock=lambda: now, options=options)
    t0 = time.perf_counter()
    text = render(registry).body
    render_s = time.perf_counter() - t0
    om = render(registry, accept=OPENMETRICS).body
    families = by_family(text)
    return {
        "families": sorted(options.families, key=FAMILY_SETS.index),
        "granularity": options.granularity,
        "series": sum(f["series"] for f in families.values()),
        "text_bytes": len(text),
        "openmetrics_bytes": len(om),
        "text_gzip_bytes": len(_gzipped(text)),
        "render_text_s": round(render_s, 3),
        "by_family": families,
    }


def anatomy(body: bytes) -> dict[str, Any]:
    """Where the bytes of a plain-text body go: HELP/TYPE lines, the ``cluster`` label, the ``.0`` of
    integral values (Go's client writes ``1``, Python's ``1.0``) and what is left with every label value
    empty (the floor of these names and label names)."""
    samples = [line for line in body.splitlines(keepends=True) if not line.startswith(b"#")]
    cluster = f'cluster="{CLUSTER}"'.encode()
    return {
        "series": len(samples),
        "bytes_per_series": round(sum(map(len, samples)) / max(1, len(samples)), 1),
        "help_and_type_bytes": len(body) - sum(map(len, samples)),
        "cluster_label_bytes": sum(line.count(cluster) * (len(cluster) + 1) for line in samples),
        "dot_zero_bytes": 2 * sum(1 for line in samples if line.endswith(b".0\n")),
        "bytes_if_label_values_empty": len(body) - sum(len(v) - 3 for v in _label_values(samples)),
    }


def _label_values(samples: list[bytes]) -> Iterable[bytes]:
    for line in samples:
        yield from re.findall(rb'="(?:[^"\\]|\\.)*"', line)


def selections() -> list[tuple[FamilySet, ...]]:
    """Each set alone (offsetguard's: the default), each pair, all three, none."""
    return [*combinations(FAMILY_SETS, 1), *combinations(FAMILY_SETS, 2), FAMILY_SETS, ()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=200)
    parser.add_argument("--groups", type=int, default=2000)
    parser.add_argument("--per-group", type=int, default=25)
    args = parser.parse_args()

    now = 1_700_000_000.0
    cluster = fleet(args.topics, args.groups, args.per_group, now)
    inputs = ScrapeInputs(clusters=[cluster], log_end_times=KnownCrossings(now))
    assert cluster.committed is not None and cluster.offsets is not None
    rows: list[dict[str, Any]] = []
    print(f"{'families':<46} {'granularity':<10} {'series':>8} {'text MB':>8} {'OM MB':>8} {'gzip MB':>8}")
    for families in selections():
        for granularity in GRANULARITIES:
            row = measure(inputs, now, MetricsOptions(frozenset(families), granularity))
            rows.append(row)
            print(
                f"{','.join(row['families']) or '(none: health and alerts)':<46} {granularity:<10} "
                f"{row['series']:>8} {row['text_bytes'] / 1e6:>8.2f} {row['openmetrics_bytes'] / 1e6:>8.2f} "
                f"{row['text_gzip_bytes'] / 1e6:>8.3f}",
                flush=True,
            )
    own = list(DEFAULT_FAMILIES)
    default = next(r for r in rows if r["families"] == own and r["granularity"] == "partition")
    kafka = next(r for r in rows if r["families"] == ["kafka_exporter"] and r["granularity"] == "partition")
    kafka_options = MetricsOptions(frozenset({"kafka_exporter"}), "partition")
    kafka_registry = build_registry(lambda: inputs, clock=lambda: now, options=kafka_options)
    result: dict[str, Any] = {
        "benchmark": "metrics_families",
        "when": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "setup": {k: v for k, v in vars(args).items()},
        "fleet": {
            "partitions": len(cluster.offsets.partitions),
            "groups": args.groups,
            "committed_group_partitions": len(cluster.committed.offsets),
        },
        "default_text_bytes": default["text_bytes"],
        "kafka_exporter_partition_text_bytes": kafka["text_bytes"],
        "kminion_body_bytes_reference": KMINION_BODY_BYTES,
        "kafka_exporter_partition_anatomy": anatomy(render(kafka_registry).body),
        "combinations": rows,
    }
    print(
        f"default (offsetguard's families, partition): {default['series']} series, "
        f"{default['text_bytes'] / 1e6:.1f} MB; "
        f"kafka_exporter only, partition: {kafka['series']} series, {kafka['text_bytes'] / 1e6:.1f} MB "
        f"(kminion: {KMINION_BODY_BYTES / 1e6:.1f} MB)",
        flush=True,
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "metrics_families.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
