"""The commit history as tables: ``commits`` and ``anomalies`` (pure DataFrame -> DataFrame transforms).

Same semantics as the online detectors in :mod:`alerts`, replayed over the whole history with window
functions over each group-partition's records in log order (``source_partition``, ``source_offset``: a
group's records all live in one ``__consumer_offsets`` partition):

* ``offset_rewind`` — a commit below the previous commit; ``messages_replayed = old - new``;
* ``offset_skip`` — a forward move from an offset that was unfetchable before the move (below a log
  start sampled before it, or beyond a log end sampled between the two commits); needs log ranges;
  ``messages_skipped = new - old``;
* ``offsets_lost`` — an offset tombstone while the group was consuming (state neither Empty nor Dead,
  or a commit within ``recent_commit_seconds``), unless the group itself was being deleted;
* ``committed_beyond_log_end`` / ``committed_below_log_start`` — a log-range sample showing the
  committed offset outside the log (``beyond`` / ``messages_lost``), once per committed offset.

A record delivered twice (the archive is written at least once) has the same source offset as the one
before it and is dropped. Log ranges are an optional frame ``cluster, topic, partition, at`` (ms),
``log_start, log_end``.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from alerts.model import (
    COMMITTED_BELOW_LOG_START,
    COMMITTED_BEYOND_LOG_END,
    OFFSET_REWIND,
    OFFSET_SKIP,
    OFFSETS_LOST,
)
from pipeline import schema
from pipeline.options import AnalysisSettings

KEY = ("cluster", "group", "topic", "partition")
ORDER = ("source_partition", "source_offset")
GROUP_KINDS = (schema.GROUP_METADATA, schema.CONSUMER_GROUP_METADATA, schema.GROUP_TOMBSTONE)
ANOMALY_COLUMNS = (
    "cluster",
    "group",
    "topic",
    "partition",
    "kind",
    "cause",
    "at",
    "source_partition",
    "source_offset",
    "old_offset",
    "new_offset",
    "magnitude",
    "messages_replayed",
    "messages_skipped",
    "offsets_lost",
    "messages_lost",
    "beyond",
    "group_state",
)


def offset_records(history: DataFrame) -> DataFrame:
    """Commits and offset tombstones in log order per group-partition, with the previous record
    (``prev_offset``, ``prev_at``) and the next one (``next_offset``, ``next_at``); repeated deliveries
    removed. ``at`` is the commit time (the record time for a tombstone), in ms.

    The window is partitioned and sorted by a 64-bit hash of the group-partition and the source
    offset only (two longs): the names ride along as payload, never compared.
    """
    rows = history.where(F.col("kind").isin(schema.COMMIT, schema.OFFSET_TOMBSTONE)).select(
        *KEY,
        *ORDER,
        "kind",
        "offset",
        F.coalesce("commit_timestamp", "timestamp").alias("at"),
        F.xxhash64(*KEY).alias("_k"),
    )
    w = Window.partitionBy("_k").orderBy(*ORDER)
    rows = rows.select(
        "*",
        F.lag("source_offset").over(w).alias("_prev_so"),
        F.lag("source_partition").over(w).alias("_prev_sp"),
        F.lag("offset").over(w).alias("prev_offset"),
        F.lag("at").over(w).alias("prev_at"),
        F.lead("offset").over(w).alias("next_offset"),
        F.lead("at").over(w).alias("next_at"),
    )
    dup = (F.col("_prev_so") == F.col("source_offset")) & (F.col("_prev_sp") == F.col("source_partition"))
    return rows.where(~F.coalesce(dup, F.lit(False))).drop("_prev_so", "_prev_sp", "_k")


def commits_table(history: DataFrame) -> DataFrame:
    """The ``commits`` table: every commit and offset tombstone (``offset`` null) of the history, with
    ``commit_time`` (the record time for a tombstone) as a timestamp. A projection: no shuffle."""
    return history.where(F.col("kind").isin(schema.COMMIT, schema.OFFSET_TOMBSTONE)).select(
        *KEY,
        "offset",
        "leader_epoch",
        F.timestamp_millis(F.coalesce("commit_timestamp", "timestamp")).alias("commit_time"),
        "metadata",
        "expire_timestamp",
        "topic_id",
        (F.col("kind") == schema.OFFSET_TOMBSTONE).alias("tombstone"),
        *ORDER,
    )


def _anomaly(kind: str | Column, cause: Column, magnitude: Column, **measures: Column) -> list[Column]:
    names = ("messages_replayed", "messages_skipped", "offsets_lost", "messages_lost", "beyond")
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
        *[measures.get(n, F.lit(None)).cast("bigint").alias(n) for n in names],
    ]


def rewinds_and_losses(offsets: DataFrame, settings: AnalysisSettings) -> DataFrame:
    """``offset_rewind`` rows (cause ``rebalance_recommit`` when the next commit undoes the rewind within
    the window) and candidate ``offsets_lost`` rows (every tombstone of a committed offset), in one pass."""
    window_ms = settings.recommit_window_seconds * 1000
    rewind = (F.col("kind") == schema.COMMIT) & (F.col("offset") < F.col("prev_offset"))
    lost = (F.col("kind") == schema.OFFSET_TOMBSTONE) & F.col("prev_offset").isNotNull()
    undone = (F.col("next_offset") >= F.col("prev_offset")) & (F.col("next_at") - F.col("at") <= window_ms)
    replayed = F.col("prev_offset") - F.col("offset")
    kind = F.when(rewind, F.lit(OFFSET_REWIND)).otherwise(F.lit(OFFSETS_LOST))
    cause = (
        F.when(~rewind, F.lit("deleted"))
        .when(undone, F.lit("rebalance_recommit"))
        .otherwise(F.lit("unknown"))
    )
    return offsets.where(rewind | lost).select(
        *_anomaly(
            kind,
            cause,
            F.when(rewind, replayed).otherwise(F.lit(1)),
            messages_replayed=F.when(rewind, replayed),
            offsets_lost=F.when(~rewind, F.lit(1)),
        )
    )


def _asof_ranges(moves: DataFrame, ranges: DataFrame) -> DataFrame:
    """Each move with the last range sample at or before it (``r_at``, ``r_end``) and the highest log
    start sampled up to then (``r_start``), by one window over moves and samples of a partition."""
    tp = ("cluster", "topic", "partition")
    samples = ranges.select(
        *tp,
        F.col("at").alias("_t"),
        F.lit(0).alias("_order"),  # a sample at the same ms as a move was taken before it
        F.col("at").alias("_r_at"),
        F.col("log_start").alias("_r_start"),
        F.col("log_end").alias("_r_end"),
    )
    both = moves.select("*", F.col("at").alias("_t"), F.lit(1).alias("_order")).unionByName(
        samples, allowMissingColumns=True
    )
    w = Window.partitionBy(*tp).orderBy("_t", "_order").rowsBetween(Window.unboundedPreceding, 0)
    return both.select(
        "*",
        F.last("_r_at", ignorenulls=True).over(w).alias("r_at"),
        F.max("_r_start").over(w).alias("r_start"),
        F.last("_r_end", ignorenulls=True).over(w).alias("r_end"),
    ).where(F.col("_order") == 1)


def skips(offsets: DataFrame, ranges: DataFrame) -> DataFrame:
    """``offset_skip`` rows: forward moves whose old offset was below the log start or beyond the log end."""
    moves = offsets.where((F.col("kind") == schema.COMMIT) & (F.col("offset") > F.col("prev_offset")))
    looked = _asof_ranges(moves, ranges)
    below = F.col("prev_offset") < F.col("r_start")
    beyond = (F.col("r_at") >= F.col("prev_at")) & (F.col("prev_offset") > F.col("r_end"))
    cause = (
        F.when(F.col("offset") == F.col("r_end"), F.lit("auto_reset_latest"))
        .when(F.col("offset") == F.col("r_start"), F.lit("auto_reset_earliest"))
        .otherwise(F.lit("unknown"))
    )
    skipped = F.col("offset") - F.col("prev_offset")
    deleted = F.greatest(F.least("offset", "r_start") - F.col("prev_offset"), F.lit(0))
    return looked.where(below | beyond).select(
        *_anomaly(OFFSET_SKIP, cause, skipped, messages_skipped=skipped, messages_lost=deleted)
    )


def outside_log(offsets: DataFrame, ranges: DataFrame) -> DataFrame:
    """``committed_beyond_log_end`` / ``committed_below_log_start``: once per committed offset, at the
    first range sample that shows it outside the log."""
    held = offsets.where(F.col("kind") == schema.COMMIT).alias("c")
    r = ranges.alias("r")
    cond = (
        (F.col("c.cluster") == F.col("r.cluster"))
        & (F.col("c.topic") == F.col("r.topic"))
        & (F.col("c.partition") == F.col("r.partition"))
        & (F.col("r.at") >= F.col("c.at"))
        & (F.col("r.at") < F.coalesce(F.col("c.next_at"), F.lit(2**62)))
    )
    seen = held.join(r, cond).select(
        "c.*",
        F.col("r.at").alias("r_at"),
        F.col("r.log_start").alias("r_start"),
        F.col("r.log_end").alias("r_end"),
    )
    beyond = F.col("offset") - F.col("r_end")
    lost = F.col("r_start") - F.col("offset")
    flagged = seen.select(
        "*",
        F.when(beyond > 0, F.lit(COMMITTED_BEYOND_LOG_END))
        .when(lost > 0, F.lit(COMMITTED_BELOW_LOG_START))
        .alias("_kind"),
        F.when(beyond > 0, beyond).otherwise(lost).alias("_size"),
    ).where(F.col("_kind").isNotNull())
    first = flagged.groupBy(*KEY, *ORDER, "_kind").agg(
        F.min("r_at").alias("at"),
        F.min_by("_size", "r_at").alias("_size"),
        F.first("prev_offset").alias("prev_offset"),
        F.first("prev_at").alias("prev_at"),
        F.first("offset").alias("offset"),
    )
    size = F.col("_size")
    return first.select(
        *[F.col(c) for c in KEY],
        F.col("_kind").alias("kind"),
        F.when(F.col("_kind") == COMMITTED_BELOW_LOG_START, F.lit("retention")).alias("cause"),
        "at",
        "prev_at",
        *ORDER,
        F.col("prev_offset").alias("old_offset"),
        F.col("offset").alias("new_offset"),
        size.cast("bigint").alias("magnitude"),
        *[
            F.lit(None).cast("bigint").alias(n)
            for n in ("messages_replayed", "messages_skipped", "offsets_lost")
        ],
        F.when(F.col("_kind") == COMMITTED_BELOW_LOG_START, size).cast("bigint").alias("messages_lost"),
        F.when(F.col("_kind") == COMMITTED_BEYOND_LOG_END, size).cast("bigint").alias("beyond"),
    )


def with_group_state(rows: DataFrame, history: DataFrame) -> DataFrame:
    """``rows`` (few: anomalies) with the group's state just before each (``group_state``: Stable, Empty,
    Dead, Unknown for a group known only by KIP-848 epochs, null if never seen) and ``group_deleted``
    (the next group record of the group is its tombstone)."""
    groups = history.where(F.col("kind").isin(*GROUP_KINDS)).select(
        "cluster",
        "group",
        *ORDER,
        F.coalesce("group_state", F.lit("Unknown")).alias("_state"),
        F.col("group_state").alias("_explicit"),
        (F.col("kind") == schema.GROUP_TOMBSTONE).alias("_dead"),
        F.lit(0).alias("_is_row"),
    )
    marked = rows.select("*", F.lit(1).alias("_is_row"))
    both = marked.unionByName(groups, allowMissingColumns=True)
    before = Window.partitionBy("cluster", "group").orderBy(*ORDER, "_is_row")
    after = before.rowsBetween(1, Window.unboundedFollowing)
    upto = before.rowsBetween(Window.unboundedPreceding, -1)
    state = F.coalesce(
        F.last("_explicit", ignorenulls=True).over(upto), F.last("_state", ignorenulls=True).over(upto)
    )
    return (
        both.select(
            "*",
            state.alias("_group_state"),
            F.coalesce(F.first("_dead", ignorenulls=True).over(after), F.lit(False)).alias("group_deleted"),
        )
        .where(F.col("_is_row") == 1)
        .drop("_is_row", "_state", "_explicit", "_dead", "group_state")
        .withColumnRenamed("_group_state", "group_state")
    )


def find_anomalies(
    history: DataFrame,
    offsets: DataFrame,
    ranges: DataFrame | None = None,
    settings: AnalysisSettings | None = None,
) -> DataFrame:
    """Every anomaly (columns :data:`ANOMALY_COLUMNS`); ``offsets`` is :func:`offset_records`."""
    settings = settings or AnalysisSettings()
    parts = [rewinds_and_losses(offsets, settings)]
    if ranges is not None:
        parts += [skips(offsets, ranges), outside_log(offsets, ranges)]
    found = parts[0]
    for part in parts[1:]:
        found = found.unionByName(part)
    found = with_group_state(found, history)
    recent_ms = settings.recent_commit_seconds * 1000
    # offsets_lost only while consuming, and not when the group itself was being deleted while idle.
    idle = F.col("group_state").isin("Empty", "Dead") | F.col("group_state").isNull()
    recent = (F.col("at") - F.col("prev_at")) <= recent_ms
    consuming = ~idle | F.coalesce(recent, F.lit(False))
    deleting = F.col("group_deleted") & F.col("group_state").isin("Empty", "Dead")
    keep = (F.col("kind") != OFFSETS_LOST) | (consuming & ~deleting)
    cause = (
        F.when(
            F.col("kind") == OFFSETS_LOST,
            F.when(F.col("group_deleted"), F.lit("group_deleted_while_consuming")).otherwise(
                F.lit("deleted_while_consuming")
            ),
        )
        .when(
            F.col("kind").isin(OFFSET_REWIND, OFFSET_SKIP) & (F.col("group_state") == "Empty"),
            F.lit("admin_reset"),
        )
        .otherwise(F.col("cause"))
    )
    return found.where(keep).withColumn("cause", cause).select(*ANOMALY_COLUMNS)
