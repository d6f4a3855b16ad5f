"""The rules that need log-range samples (``cluster, topic, partition, at`` ms, ``log_start, log_end``):
skips, resets after a truncation, committed offsets outside the log. Pure DataFrame -> DataFrame
transforms over :func:`pipeline.analysis.offset_records` rows, as the online detectors in :mod:`alerts`.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from alerts.model import COMMITTED_BELOW_LOG_START, COMMITTED_BEYOND_LOG_END, OFFSET_REWIND, OFFSET_SKIP
from alerts.moves import LAST_COMMIT_SECONDS, LEFT_OR_ADMIN
from pipeline import schema
from pipeline.anomaly_rows import KEY, MEASURES, ORDER, anomaly_row

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


def _near(value: Column, a: Column, b: Column) -> Column:
    """As :func:`alerts.current.near`: ``value`` lies between two samples (either may be missing)."""
    lo, hi = F.least(a, b), F.greatest(a, b)  # least/greatest skip nulls
    return lo.isNotNull() & (lo <= value) & (value <= hi)


def _around(moves: DataFrame, ranges: DataFrame, *cols: str) -> DataFrame:
    """``moves`` (few) joined with every sample of their partition: ``_r_at``, ``_r_start``, ``_r_end``
    plus ``cols`` of the move."""
    m, r = moves.alias("m"), ranges.alias("r")
    return m.join(r, [F.col(f"m.{c}") == F.col(f"r.{c}") for c in TP]).select(
        *[F.col(f"m.{c}") for c in (*KEY, *ORDER, *cols)],
        F.col("r.at").alias("_r_at"),
        F.col("r.log_start").alias("_r_start"),
        F.col("r.log_end").alias("_r_end"),
    )


def _bracket(r_at: Column, at: Column) -> list[Column]:
    """Aggregates: the log start and end of the last sample before ``at`` and of the first at or after it
    (as :func:`alerts.current.bracket`)."""
    sample = F.struct(r_at.alias("t"), F.col("_r_start").alias("start"), F.col("_r_end").alias("end"))
    before = F.max(F.when(r_at < at, sample))
    after = F.min(F.when(r_at >= at, sample))
    return [
        before.getField("start").alias("_start_before"),
        before.getField("end").alias("_end_before"),
        after.getField("start").alias("_start_after"),
        after.getField("end").alias("_end_after"),
    ]


def skips(offsets: DataFrame, ranges: DataFrame) -> DataFrame:
    """``offset_skip`` rows: forward moves whose old offset was below the log start or beyond the log end.

    As :mod:`alerts.skip`: ``messages_lost`` is the deleted-unread part D (certain), ``messages_skipped``
    the certain never-read part (D from below the log start), ``messages_skipped_max`` and
    ``messages_read_past_max`` the bounds when the reset's direction is unknown (landed at or past E_lo,
    the largest log end sampled before the reset, and not on the log start alone). An ``admin_reset``,
    known only with the group state, is set in :func:`pipeline.analysis.find_anomalies`."""
    moves = offsets.where((F.col("kind") == schema.COMMIT) & (F.col("offset") > F.col("prev_offset")))
    looked = _asof_ranges(moves, ranges)
    below = F.col("prev_offset") < F.col("r_start")
    beyond = (F.col("r_at") >= F.col("prev_moved_at")) & (F.col("prev_offset") > F.col("r_end"))
    # As alerts.skip: from beyond the log end only the offsets that held messages (up to the sampled log
    # end) count; none, no finding (the online detector also looks at the sample after the move).
    existing = F.least("offset", "r_end") - F.col("prev_offset")
    found = looked.where(below | (beyond & (existing > 0))).select(
        "*", below.alias("_below"), existing.alias("_existing")
    )
    # The few skips, each with its partition's samples: E_lo (samples before the reset: the old offset
    # still fetchable, or taken by its commit) and the samples around the move (where it landed).
    near = _around(found, ranges, "at", "prev_offset", "prev_at", "prev_moved_at")
    before_reset = (F.col("_r_at") <= F.col("at")) & (
        (F.col("_r_start") <= F.col("prev_offset")) | (F.col("_r_at") <= F.col("prev_at"))
    )
    r_at = F.col("_r_at")
    truncated = (r_at >= F.col("prev_moved_at")) & (F.col("prev_offset") > F.col("_r_end"))
    seen = near.groupBy(*KEY, *ORDER).agg(
        F.max(F.when(before_reset, F.col("_r_end"))).alias("_e_lo"),
        F.min(F.when(truncated, F.struct(r_at.alias("t"), F.col("_r_end").alias("end"))))
        .getField("end")
        .alias("_truncated_end"),
        *_bracket(r_at, F.col("at")),
    )
    rows = found.join(seen, [*KEY, *ORDER], "left")
    at_start = _near(F.col("offset"), F.col("_start_before"), F.col("_start_after"))
    at_end = _near(F.col("offset"), F.col("_end_before"), F.col("_end_after"))
    earliest = (F.col("offset") < F.col("_e_lo")) | (at_start & ~at_end)
    unknown = F.col("_below") & ~F.coalesce(earliest, F.lit(False))
    cause = (
        F.when(~F.col("_below"), F.lit("unknown"))
        .when(~unknown, F.lit("auto_reset_earliest"))
        .when(at_end, F.lit("auto_reset_direction_unknown"))
        .otherwise(F.lit("unknown"))
    )
    jumped = F.when(F.col("_below"), F.col("offset") - F.col("prev_offset")).otherwise(F.col("_existing"))
    # Deleted unread only up to the log start sampled before the move; from below it, the rest was read
    # after a reset to earliest, or skipped by one to latest: the certain part is D.
    deleted = F.greatest(F.least("offset", "r_start") - F.col("prev_offset"), F.lit(0))
    # From beyond the log end to within the log again: the group may have read on from its old offset once
    # the log end passed it, having skipped what was written below it since the truncation
    end_around = F.greatest("_end_before", "_end_after")
    within = ~F.col("_below") & (F.col("offset") <= end_around)
    skipped = F.when(F.col("_below"), deleted).when(within, F.lit(0)).otherwise(jumped)
    past_truncation = F.least(F.col("offset"), end_around) - F.col("_truncated_end")
    return rows.select(
        *anomaly_row(
            OFFSET_SKIP,
            cause,
            skipped,
            messages_skipped=skipped,
            messages_lost=deleted,
            messages_skipped_max=F.when(unknown, jumped).when(within, past_truncation),
            messages_read_past_max=F.when(unknown, jumped - deleted),
        )
    )


def operator_resets(idle: DataFrame, ranges: DataFrame) -> DataFrame:
    """``offset_skip`` rows (``admin_reset``) for forward moves from a fetchable offset while the group had
    no members: an operator's reset, ``messages_skipped`` = the messages between the two offsets, up to the
    log end around the move; none, no row. Within ``LAST_COMMIT_SECONDS`` of the group's last record
    (Empty), ``member_left_or_admin_reset``: 0 skipped for certain, that count at most. As
    :mod:`alerts.skip`. ``idle``: the forward moves made while the group was Empty (few: see
    :func:`pipeline.analysis.idle_moves`)."""
    near = _around(idle, ranges, "at", "prev_offset", "prev_moved_at")
    before = F.col("_r_at") <= F.col("at")
    seen = near.groupBy(*KEY, *ORDER).agg(
        F.max(F.when(before, F.col("_r_start"))).alias("_max_start"),
        F.max(
            F.when(
                before & (F.col("_r_at") >= F.col("prev_moved_at")), F.col("prev_offset") - F.col("_r_end")
            )
        ).alias("_past_end"),
        *_bracket(F.col("_r_at"), F.col("at")),
    )
    rows = idle.join(seen, [*KEY, *ORDER])
    fetchable = ~(F.coalesce(F.col("prev_offset") < F.col("_max_start"), F.lit(False))) & ~(
        F.coalesce(F.col("_past_end") > 0, F.lit(False))
    )
    end = F.greatest("_end_before", "_end_after")
    skipped = F.least(F.col("offset"), end) - F.col("prev_offset")
    # no sample since the move (the end of the history): the log end may have grown past the last one
    open_ended = F.col("_end_after").isNull() & (F.col("_end_before") < F.col("offset"))
    bound = F.when(open_ended, F.col("offset") - F.col("prev_offset"))
    # just after the group emptied: the departing member's own last commit fits as well (alerts.moves)
    left = F.coalesce(F.col("at") - F.col("group_since") <= LAST_COMMIT_SECONDS * 1000, F.lit(False))
    return rows.where(fetchable & (skipped > 0)).select(
        *anomaly_row(
            OFFSET_SKIP,
            F.when(left, F.lit(LEFT_OR_ADMIN)).otherwise(F.lit("admin_reset")),
            F.when(left, F.lit(0)).otherwise(skipped),
            messages_skipped=F.when(left, F.lit(0)).otherwise(skipped),
            messages_lost=F.lit(0),
            messages_skipped_max=F.when(left, F.coalesce(bound, skipped)).otherwise(bound),
        )
    )


def outside_log(offsets: DataFrame, ranges: DataFrame) -> DataFrame:
    """``committed_beyond_log_end`` / ``committed_below_log_start``: once per committed offset, at the
    first range sample that shows it outside the log. A hold lasts from the commit that moved the offset
    to the next record that changed it: re-commits of the same offset (auto-commit, a paused member) are
    one hold, as online they are one alert.

    No cause for a commit beyond the log end: online tells a re-created topic's stale commit (cause
    ``topic_recreated``, a warning) from a truncation by the topic ids metadata gave with each range; the
    ranges here (exported from the store's log-range changes) carry none, so the two are one kind with the
    same ``beyond``, which is what the e2e comparison holds them to (kind and magnitude, not cause)."""
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
            (
                F.when(F.col("_kind") == COMMITTED_BELOW_LOG_START, size)
                if n == "messages_lost"
                else F.when(F.col("_kind") == COMMITTED_BEYOND_LOG_END, size)
                if n == "beyond"
                else F.lit(None)
            )
            .cast("bigint")
            .alias(n)
            for n in MEASURES
        ],
    )


def truncation_moves(offsets: DataFrame, ranges: DataFrame) -> DataFrame:
    """Moves *back* from an offset left beyond a truncated log end (an unclean election; T = the log end of
    the first sample since the old offset was committed that shows it beyond the log end, as
    :func:`alerts.moves.truncation_under`). The offsets T..old held messages the truncation destroyed.

    * new at or past T: an ``offset_skip`` (``auto_reset_direction_unknown``): a reset to latest skipped
      at most ``new - T``, one to earliest re-read at most ``T - the log start before the truncation``;
      ``messages_skipped`` 0 (nothing certain);
    * below T: an ``offset_rewind`` (``auto_reset_earliest``; ``admin_reset`` for an Empty group unless it
      landed on the log start, set in :func:`pipeline.analysis.find_anomalies`), ``messages_replayed =
      min(old, T) - new``.

    ``_exact``: the row's cause is final (no admin_reset). Only backward moves are candidates (few), so
    each is joined with its partition's samples."""
    back = offsets.where((F.col("kind") == schema.COMMIT) & (F.col("offset") < F.col("prev_offset")))
    joined = _around(back, ranges, "at", "prev_offset", "prev_moved_at", "offset")
    since_old = (F.col("_r_at") >= F.col("prev_moved_at")) & (F.col("_r_at") <= F.col("at"))
    beyond = since_old & (F.col("prev_offset") > F.col("_r_end"))
    move = Window.partitionBy(*KEY, *ORDER)
    first_at = F.min(F.when(beyond, F.col("_r_at"))).over(move)
    marked = joined.select("*", first_at.alias("_first_at"))
    looked = marked.groupBy(*KEY, *ORDER).agg(
        F.min(F.when(F.col("_r_at") == F.col("_first_at"), F.col("_r_end"))).alias("_truncated_end"),
        F.coalesce(F.max(F.when(F.col("_r_at") < F.col("_first_at"), F.col("_r_start"))), F.lit(0)).alias(
            "_start_floor"
        ),
        *_bracket(F.col("_r_at"), F.col("at")),
    )
    end = F.col("_truncated_end")
    # as alerts.skip._could_matter: a reset to the truncated end with nothing kept below it is no finding
    matters = (F.col("offset") > end) | (end > F.col("_start_floor")) | (F.col("offset") < end)
    rows = back.join(looked, [*KEY, *ORDER]).where(end.isNotNull() & matters)
    skip = F.col("offset") >= end
    replayed = F.least("prev_offset", end) - F.col("offset")
    at_start = _near(F.col("offset"), F.col("_start_before"), F.col("_start_after"))
    return rows.select(
        *anomaly_row(
            F.when(skip, F.lit(OFFSET_SKIP)).otherwise(F.lit(OFFSET_REWIND)),
            F.when(skip, F.lit("auto_reset_direction_unknown")).otherwise(F.lit("auto_reset_earliest")),
            F.when(skip, F.lit(0)).otherwise(replayed),
            messages_replayed=F.when(~skip, replayed),
            messages_skipped=F.when(skip, F.lit(0)),
            messages_lost=F.when(skip, F.lit(0)),
            messages_skipped_max=F.when(skip, F.col("offset") - end),
            messages_replayed_max=F.when(skip, F.greatest(end - F.col("_start_floor"), F.lit(0))),
        ),
        (skip | at_start).alias("_exact"),
    )
