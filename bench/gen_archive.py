"""bench/gen_archive: a synthetic commit archive, written directly as Parquet with pyarrow (numpy, fast).

``--commits`` commits over ``--groups`` groups (``--partitions`` partitions each, one topic per 100
groups), spread evenly over ``--hours`` hours of the archive layout (``cluster=/date=/hour=``). Each
group-partition advances by about 100 messages a commit; one commit in ``--rewind-every`` goes back by
up to 5,000 and one in ``--tombstone-every`` is a tombstone, so the analysis has incidents to find. Every
group gets a Stable GroupMetadata record at the start of each hour.

    .venv/bin/python -m bench.gen_archive --out /tmp/archive [--commits 50000000] [--groups 5000]
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import schema
from pipeline.archive import ARCHIVE_SCHEMA

START = datetime(2026, 11, 1, tzinfo=UTC)
SOURCE_PARTITIONS = 50


def _strings(names: list[str], index: np.ndarray) -> pa.Array:
    return pa.DictionaryArray.from_arrays(pa.array(index.astype(np.int32)), pa.array(names))


def generate(
    out: Path,
    *,
    commits: int,
    groups: int,
    partitions: int,
    hours: int,
    rewind_every: int,
    tombstone_every: int,
    cluster: str = "bench",
    seed: int = 7,
) -> dict[str, Any]:
    """Write the archive; returns what was written."""
    rng = np.random.default_rng(seed)
    keys = groups * partitions
    per_key = -(-commits // keys)
    per_hour = -(-per_key // hours)
    group_names = [f"group-{g:05d}" for g in range(groups)]
    topic_names = [f"topic-{t:03d}" for t in range(-(-groups // 100))]
    key_group = np.repeat(np.arange(groups), partitions)
    key_partition = np.tile(np.arange(partitions), groups)
    key_source = key_group % SOURCE_PARTITIONS
    written = rows_total = 0
    t0 = time.perf_counter()
    for hour in range(hours):
        k0, k1 = hour * per_hour, min((hour + 1) * per_hour, per_key)
        if k0 >= k1:
            break
        steps = k1 - k0
        n = steps * keys
        step = np.repeat(np.arange(k0, k1), keys)  # commit number of each row, in time order
        key = np.tile(np.arange(keys), steps)
        offset = step.astype(np.int64) * 100 + (key % 97)
        rewind = rng.integers(0, rewind_every, n) == 0
        offset[rewind] -= rng.integers(1, 5000, int(rewind.sum()))
        tomb = rng.integers(0, tombstone_every, n) == 0
        hour_ms = int(START.timestamp() * 1000) + hour * 3_600_000
        at = hour_ms + ((step - k0) * 3_600_000 // steps) + (key % 1000)
        base = hour * per_hour * keys
        commit_part = {
            "source_partition": key_source[key].astype(np.int32),
            "source_offset": base + groups + np.arange(n, dtype=np.int64),
            "timestamp": at,
            "kind": np.where(tomb, schema.OFFSET_TOMBSTONE, schema.COMMIT),
            "record_type": np.ones(n, dtype=np.int32),
            "group": _strings(group_names, key_group[key]),
            "topic": _strings(topic_names, key_group[key] // 100),
            "partition": key_partition[key].astype(np.int32),
            "offset": pa.array(offset, mask=tomb),
            "leader_epoch": pa.array(np.zeros(n, dtype=np.int32), mask=tomb),
            "metadata": pa.array(np.where(tomb, None, ""), type=pa.string()),
            "commit_timestamp": pa.array(at, mask=tomb),
        }
        date, hh = datetime.fromtimestamp(hour_ms / 1000, tz=UTC).strftime("%Y-%m-%d %H").split()
        directory = out / f"cluster={cluster}" / f"date={date}" / f"hour={hh}"
        directory.mkdir(parents=True, exist_ok=True)
        g = np.arange(groups)
        state = {
            "source_partition": (g % SOURCE_PARTITIONS).astype(np.int32),
            "source_offset": base + g,
            "timestamp": np.full(groups, hour_ms),
            "kind": np.full(groups, schema.GROUP_METADATA),
            "record_type": np.full(groups, 2, dtype=np.int32),
            "group": _strings(group_names, g),
            "group_state": np.full(groups, "Stable"),
            "generation": np.full(groups, hour + 1, dtype=np.int32),
            "protocol_type": np.full(groups, "consumer"),
            "members": np.ones(groups, dtype=np.int32),
        }
        for name, columns in (("part-0-groups", state), ("part-1-commits", commit_part)):
            table = pa.table(
                {f.name: columns.get(f.name, pa.nulls(len(columns["kind"]), f.type)) for f in ARCHIVE_SCHEMA}
            )
            pq.write_table(table, directory / f"{name}.parquet", compression="zstd", row_group_size=1 << 20)
        written += n
        rows_total += n + groups
        print(f"hour {hour + 1}/{hours}: {written:,} commits", flush=True)
    wall = time.perf_counter() - t0
    return {
        "commits": written,
        "rows": rows_total,
        "groups": groups,
        "group_partitions": keys,
        "hours": hours,
        "wall_s": wall,
        "rows_per_s": rows_total / wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--commits", type=int, default=50_000_000)
    parser.add_argument("--groups", type=int, default=5000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--hours", type=int, default=24)
    parser.add_argument("--rewind-every", type=int, default=100_000)
    parser.add_argument("--tombstone-every", type=int, default=1_000_000)
    args = parser.parse_args()
    done = generate(
        args.out,
        commits=args.commits,
        groups=args.groups,
        partitions=args.partitions,
        hours=args.hours,
        rewind_every=args.rewind_every,
        tombstone_every=args.tombstone_every,
    )
    print(done)


if __name__ == "__main__":
    main()
