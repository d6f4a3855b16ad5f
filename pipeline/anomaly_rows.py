"""What every anomaly row carries: the group-partition, the record's place in the log, the move and its
measures (shared by :mod:`pipeline.analysis` and :mod:`pipeline.log_ranges`)."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

KEY = ("cluster", "group", "topic", "partition")
ORDER = ("source_partition", "source_offset")
MEASURES = (
    "messages_replayed",
    "messages_skipped",
    "offsets_lost",
    "messages_lost",
    "beyond",
    # upper bounds when the commits cannot tell which reset it was (alerts.skip); null otherwise
    "messages_skipped_max",
    "messages_replayed_max",
    "messages_read_past_max",
)


def anomaly_row(kind: str | Column, cause: Column, magnitude: Column, **measures: Column) -> list[Column]:
    """The columns of an anomaly row over a frame of :func:`pipeline.analysis.offset_records` rows."""
    return [
        *[F.col(c) for c in KEY],
        (F.lit(kind) if isinstance(kind, str) else kind).alias("kind"),
        cause.alias("cause"),
        F.col("at"),
        F.col("prev_at"),
        *[F.col(c) for c in ORDER],
        F.col("prev_offset").alias("old_offset"),
        F.col("offset").alias("new_offset"),
        magnitude.cast("bigint").alias("magnitude"),
        *[measures.get(n, F.lit(None)).cast("bigint").alias(n) for n in MEASURES],
    ]
