"""The log-range samples file the job reads with ``--ranges``, written from the service's store.

The service keeps every change of each partition's log start/end (``partition_offsets_history``);
``offsetguard pipeline history --ranges-from-store`` writes them here as Parquet (pyarrow, no Spark) so
the skip, truncation-reset and outside-the-log rules see what the online detectors saw.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

RANGES_SCHEMA = pa.schema(
    [
        pa.field("cluster", pa.string(), nullable=False),
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("at", pa.int64(), nullable=False),  # ms since the epoch
        pa.field("log_start", pa.int64(), nullable=False),
        pa.field("log_end", pa.int64(), nullable=False),
    ]
)


def write_ranges(rows: Sequence[tuple[str, str, int, int, int, int]], path: Path) -> int:
    """Write ``(cluster, topic, partition, at ms, log_start, log_end)`` rows to ``path`` (atomically:
    a temporary next to it, then renamed); returns the number of rows."""
    columns: list[Sequence[object]] = list(zip(*rows, strict=True)) if rows else [() for _ in RANGES_SCHEMA]
    arrays = [pa.array(list(v), type=f.type) for v, f in zip(columns, RANGES_SCHEMA, strict=True)]
    table = pa.table(arrays, schema=RANGES_SCHEMA)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)
    return table.num_rows
