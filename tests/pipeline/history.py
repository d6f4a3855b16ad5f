"""Helpers: the scenario's tail events written through the real ArchiveSink, and the pipeline over it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.analysis import find_anomalies, offset_records
from pipeline.archive import ArchiveSink
from pipeline.sources import read_archive
from tests.pipeline.scenario import range_samples, tail_batches

RANGES_DDL = "cluster string, topic string, partition int, at bigint, log_start bigint, log_end bigint"


@dataclass(frozen=True)
class Config:
    directory: Path
    roll_seconds: float = 3600.0
    max_rows_per_file: int = 1_000_000
    retention_hours: float = 24.0 * 365 * 100
    fsync: bool = False
    enabled: bool = True


def write_archive(directory: Path, **config: Any) -> ArchiveSink:
    sink = ArchiveSink(Config(directory, **config))

    async def deliver() -> None:
        for batch in tail_batches():
            await sink.on_events(batch)

    asyncio.run(deliver())
    sink.close()
    return sink


def pipeline_anomalies(spark: Any, archive: Path) -> Any:
    history = read_archive(spark, archive)
    offsets = offset_records(history)
    ranges = spark.createDataFrame(range_samples(), RANGES_DDL)
    groups = history.where("kind not in ('commit', 'offset_tombstone')")
    return find_anomalies(groups, offsets, ranges)
