"""The rules that need log-range samples (``cluster, topic, partition, at`` ms, ``log_start, log_end``):
skips, resets after a truncation, committed offsets outside the log. Pure DataFrame -> DataFrame
transforms over :func:`pipeline.analysis.offset_records` rows, as the online detectors in :mod:`alerts`.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from alerts.model import COMMITTED_BELOW_LOG_START, COMMITTED_BEYOND_LOG_END, OFFSET_SKIP
from pipeline import schema
from pipeline.anomaly_rows import KEY, ORDER, anomaly_row

TP = ("cluster", "topic", "partition")


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
    """``offset_skip`` rows: forward moves whose old offset was below the log start or beyond the log end.

    ``messages_lost`` is the deleted-unread part, ``messages_skipped`` what was never read (see
    :mod:`alerts.skip`; an ``admin_reset``, known only with the group state, is set in
    :func:`pipeline.analysis.find_anomalies`)."""
    moves = offsets.where((F.col("kind") == schema.COMMIT) & (F.col("offset") > F.col("prev_offset")))
    looked = _asof_ranges(moves, ranges)
    below = F.col("prev_offset") < F.col("r_start")
    beyond = (F.col("r_at") >= F.col("prev_moved_at")) & (F.col("prev_offset") > F.col("r_end"))
    cause = (
        F.when(F.col("offset") == F.col("r_end"), F.lit("auto_reset_latest"))
        .when(F.col("offset") == F.col("r_start"), F.lit("auto_reset_earliest"))
        .otherwise(F.lit("unknown"))
    )
    # As alerts.skip: from beyond the log end only the offsets that held messages (up to the sampled log
    # end) count; none, no finding (the online detector also looks at the sample after the move).
    existing = F.least("offset", "r_end") - F.col("prev_offset")
    jumped = F.when(below, F.col("offset") - F.col("prev_offset")).otherwise(existing)
    # Deleted unread only up to the log start sampled before the move; from below it, what lies past that
    # log start was read after a reset to earliest (not skipped) unless it reset to latest.
    deleted = F.greatest(F.least("offset", "r_start") - F.col("prev_offset"), F.lit(0))
    read_past = F.when(below & (cause != "auto_reset_latest"), jumped - deleted).otherwise(F.lit(0))
    skipped = jumped - read_past
    return looked.where(below | (beyond & (existing > 0))).select(
        *anomaly_row(OFFSET_SKIP, cause, skipped, messages_skipped=skipped, messages_lost=deleted)
    )


def outside_log(offsets: DataFrame, ranges: DataFrame) -> DataFrame:
    """``committed_beyond_log_end`` / ``committed_below_log_start``: once per committed offset, at the
    first range sample that shows it outside the log. A hold lasts from the commit that moved the offset
    to the next record that changed it: re-commits of the same offset (auto-commit, a paused member) are
    one hold, as online they are one alert."""
    moved = ~F.col("offset").eqNullSafe(F.col("prev_offset"))
    held = offsets.where((F.col("kind") == schema.COMMIT) & moved).alias("c")
    r = ranges.alias("r")
    cond = (
        (F.col("c.cluster") == F.col("r.cluster"))
        & (F.col("c.topic") == F.col("r.topic"))
        & (F.col("c.partition") == F.col("r.partition"))
        & (F.col("r.at") >= F.col("c.at"))
        & (F.col("r.at") < F.coalesce(F.col("c.next_moved_at"), F.lit(2**62)))
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


def truncation_resets(offsets: DataFrame, ranges: DataFrame) -> DataFrame:
    """``offset_skip`` rows (cause ``auto_reset_latest``) for moves *back* from an offset left beyond a
    truncated log end to the log end at reset time (``auto.offset.reset=latest`` after an unclean
    election): nothing is re-read, but what was written between the truncation and the reset is never
    read, ``messages_skipped = new - log end right after the truncation`` (the first sample since the
    old offset was committed that shows it beyond the log end). As
    :func:`alerts.moves.reset_to_truncated_end`.

    Only backward moves are candidates (few), so each is joined with its partition's samples."""
    back = offsets.where((F.col("kind") == schema.COMMIT) & (F.col("offset") < F.col("prev_offset")))
    m, r = back.alias("m"), ranges.alias("r")
    joined = m.join(r, [F.col(f"m.{c}") == F.col(f"r.{c}") for c in TP]).select(
        "m.*", F.col("r.at").alias("_r_at"), F.col("r.log_end").alias("_r_end")
    )
    since_old = (F.col("_r_at") >= F.col("prev_moved_at")) & (F.col("_r_at") <= F.col("at"))
    beyond = since_old & (F.col("prev_offset") > F.col("_r_end"))
    sample = F.struct(F.col("_r_at").alias("t"), F.col("_r_end").alias("end"))
    looked = joined.groupBy(*KEY, *ORDER).agg(
        F.min(F.when(beyond, sample)).getField("end").alias("_truncated_end"),
        F.max(F.when(F.col("_r_at") < F.col("at"), sample)).getField("end").alias("_end_before"),
        F.min(F.when(F.col("_r_at") >= F.col("at"), sample)).getField("end").alias("_end_after"),
    )
    rows = back.join(looked, [*KEY, *ORDER])
    ends = F.array_compact(F.array("_end_before", "_end_after"))
    landed = (
        (F.size(ends) > 0) & (F.array_min(ends) <= F.col("offset")) & (F.col("offset") <= F.array_max(ends))
    )
    skipped = F.greatest(F.col("offset") - F.col("_truncated_end"), F.lit(0))
    return rows.where(F.col("_truncated_end").isNotNull() & landed).select(
        *anomaly_row(
            OFFSET_SKIP,
            F.lit("auto_reset_latest"),
            skipped,
            messages_skipped=skipped,
            messages_lost=F.lit(0),
        )
    )
