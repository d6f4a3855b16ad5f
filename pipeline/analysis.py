"""The commit history as tables: ``commits`` and ``anomalies`` (pure DataFrame -> DataFrame transforms).

Same semantics as the online detectors in :mod:`alerts`, replayed over the whole history with window
functions over each group-partition's records in log order (``source_partition``, ``source_offset``: a
group's records all live in one ``__consumer_offsets`` partition):

* ``offset_rewind`` — a commit below the previous commit, ``messages_replayed = old - new``; after a
  truncation left the old offset beyond the log end T, ``min(old, T) - new`` (needs log ranges);
* ``offset_skip`` — a forward move from an offset that was unfetchable before the move (below a log
  start sampled before it, or beyond a log end sampled since the old offset was committed); needs log
  ranges; ``messages_skipped`` = certainly never read (from below the log start: the deleted-unread part,
  also in ``messages_lost``, unless the reset's direction is known to be latest: an operator's),
  ``messages_skipped_max`` / ``messages_read_past_max`` the bounds when the direction is unknown. Also
  a move back from beyond a truncated log end to T or past it (``auto_reset_direction_unknown``:
  ``messages_skipped`` 0, ``messages_skipped_max``, ``messages_replayed_max``), and a forward move of an
  Empty group from a fetchable offset (``admin_reset``, the messages in between). See
  :mod:`pipeline.log_ranges` and :mod:`alerts.skip`;
* ``offsets_lost`` — an offset tombstone while the group was consuming (it had members: state neither
  Empty nor Dead; a group the archive never describes had none, as online with the tail live), unless
  the group itself was being deleted;
* ``committed_beyond_log_end`` / ``committed_below_log_start`` — a log-range sample showing the
  committed offset outside the log (``beyond`` / ``messages_lost``), once per committed offset.

A record delivered twice (the archive is written at least once) has the same source offset as the one
before it and is dropped. Log ranges are an optional frame ``cluster, topic, partition, at`` (ms),
``log_start, log_end``.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window, WindowSpec
from pyspark.sql import functions as F

from alerts.model import (
    OFFSET_REWIND,
    OFFSET_SKIP,
    OFFSETS_LOST,
)
from pipeline import schema
from pipeline.anomaly_rows import KEY, MEASURES, ORDER, anomaly_row
from pipeline.log_ranges import operator_resets, outside_log, skips, truncation_moves
from pipeline.options import AnalysisSettings

GROUP_KINDS = (schema.GROUP_METADATA, schema.CONSUMER_GROUP_METADATA, schema.GROUP_TOMBSTONE)
ANOMALY_COLUMNS = (
    *KEY,
    "kind",
    "cause",
    "at",
    *ORDER,
    "old_offset",
    "new_offset",
    "magnitude",
    *MEASURES,
    "group_state",
)


POS_BITS = 47  # narrow rows order by source_partition * 2**47 + source_offset (one long): offsets
POS_SHIFT = 2**POS_BITS  # below 2**47 (140 trillion records), partitions below 2**16


def narrow_rows(history: DataFrame) -> DataFrame:
    """Commits and offset tombstones as numbers: ``_k`` (64-bit hash of the group-partition), ``_pos``
    (source partition * 2**47 + source offset), ``_tomb``, ``offset``, ``at`` (ms)."""
    records = history.where(F.col("kind").isin(schema.COMMIT, schema.OFFSET_TOMBSTONE))
    pos = F.col("source_partition").cast("bigint") * POS_SHIFT + F.col("source_offset")
    return records.select(
        F.xxhash64(*KEY).alias("_k"),
        pos.alias("_pos"),
        (F.col("kind") == schema.OFFSET_TOMBSTONE).alias("_tomb"),
        "offset",
        F.coalesce("commit_timestamp", "timestamp").alias("at"),
    )


def offset_records(history: DataFrame, *, narrow: bool = False) -> DataFrame:
    """Commits and offset tombstones in log order per group-partition, with the previous record
    (``prev_offset``, ``prev_at``, ``prev_moved_at``: when its offset was first committed) and the next
    one (``next_offset``, ``next_at``; ``next_moved_at``: the next record that changed the offset);
    repeated deliveries removed. ``at`` is the commit time (the
    record time for a tombstone), in ms.

    The window is partitioned by a 64-bit hash of the group-partition (``_k``) and sorted by the
    source partition and offset: the names ride along as payload, never compared. ``narrow`` rows are
    :func:`narrow_rows` with their neighbours (no ``*_moved_at``, see :func:`narrow_window`).
    """
    if narrow:
        return narrow_window(narrow_rows(history))
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
    )
    dup = (F.col("_prev_so") == F.col("source_offset")) & (F.col("_prev_sp") == F.col("source_partition"))
    # Repeats go first, so a record's neighbours are the records before and after it, never itself.
    # The windows below keep the same order: no second sort.
    rows = rows.where(~F.coalesce(dup, F.lit(False))).drop("_prev_so", "_prev_sp")
    rows = rows.select("*", *_neighbours(w))
    # moved_at: when the record's offset was first committed in a run of equal ones (auto-commit
    # re-commits an unchanged position); prev_moved_at is the previous record's, as the online
    # detectors' ``moved_at``.
    # next_moved_at: when the next record that changed the offset came (a re-commit does not end a hold).
    changed = F.when(~F.col("offset").eqNullSafe(F.col("prev_offset")), F.col("at"))
    upto_prev = w.rowsBetween(Window.unboundedPreceding, -1)
    after = w.rowsBetween(1, Window.unboundedFollowing)
    rows = rows.select(
        "*",
        F.last(changed, ignorenulls=True).over(upto_prev).alias("prev_moved_at"),
        F.first(changed, ignorenulls=True).over(after).alias("next_moved_at"),
    )
    return rows.drop("_k")


def narrow_window(rows: DataFrame) -> DataFrame:
    """:func:`narrow_rows` ``rows`` in log order per ``_k`` with ``prev_offset``, ``prev_at``,
    ``next_offset``, ``next_at``; repeated deliveries removed. Numbers only through the shuffle."""
    w = Window.partitionBy("_k").orderBy("_pos")
    rows = rows.select("*", F.lag("_pos").over(w).alias("_prev_pos"))
    dup = F.coalesce(F.col("_prev_pos") == F.col("_pos"), F.lit(False))
    return rows.where(~dup).drop("_prev_pos").select("*", *_neighbours(w))


def _neighbours(w: WindowSpec) -> list[Column]:
    return [
        F.lag("offset").over(w).alias("prev_offset"),
        F.lag("at").over(w).alias("prev_at"),
        F.lead("offset").over(w).alias("next_offset"),
        F.lead("at").over(w).alias("next_at"),
    ]


def with_names(rows: DataFrame, history: DataFrame) -> DataFrame:
    """Narrow :func:`offset_records` ``rows`` (few) as full ones again (names, ``kind``, source partition
    and offset), looked up in ``history`` by source partition and offset and checked against ``_k``
    (several clusters may share a position). A broadcast join: the scan of ``history`` decodes the
    names of the matching rows only."""
    few = rows.select(
        "*",
        F.shiftright("_pos", POS_BITS).cast("int").alias("source_partition"),
        F.col("_pos").bitwiseAND(POS_SHIFT - 1).alias("source_offset"),
    ).drop("_pos", "_tomb")
    records = history.where(F.col("kind").isin(schema.COMMIT, schema.OFFSET_TOMBSTONE))
    names = records.select(*KEY, *ORDER, "kind")
    joined = names.join(F.broadcast(few), list(ORDER)).where(F.xxhash64(*KEY) == F.col("_k"))
    return joined.drop("_k").dropDuplicates(["cluster", *ORDER])  # a record the archive holds twice


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


def _rewind(tomb: Column) -> Column:
    """A commit below the previous commit (``tomb``: the row is an offset tombstone)."""
    return ~tomb & (F.col("offset") < F.col("prev_offset"))


def _lost(tomb: Column) -> Column:
    """A tombstone of a committed offset."""
    return tomb & F.col("prev_offset").isNotNull()


def rewind_and_loss_rows(history: DataFrame) -> DataFrame:
    """The :func:`offset_records` rows :func:`rewinds_and_losses` keeps, found by the narrow window and
    given their names back: enough for :func:`find_anomalies` without log ranges."""
    tomb = F.col("_tomb")
    return with_names(narrow_window(narrow_rows(history)).where(_rewind(tomb) | _lost(tomb)), history)


def rewinds_and_losses(offsets: DataFrame, settings: AnalysisSettings) -> DataFrame:
    """``offset_rewind`` rows (cause ``rebalance_recommit`` when the next commit undoes the rewind within
    the window) and candidate ``offsets_lost`` rows (every tombstone of a committed offset), in one pass."""
    window_ms = settings.recommit_window_seconds * 1000
    tomb = F.col("kind") == schema.OFFSET_TOMBSTONE
    rewind, lost = _rewind(tomb), _lost(tomb)
    undone = (F.col("next_offset") >= F.col("prev_offset")) & (F.col("next_at") - F.col("at") <= window_ms)
    replayed = F.col("prev_offset") - F.col("offset")
    kind = F.when(rewind, F.lit(OFFSET_REWIND)).otherwise(F.lit(OFFSETS_LOST))
    cause = (
        F.when(~rewind, F.lit("deleted"))
        .when(undone, F.lit("rebalance_recommit"))
        .otherwise(F.lit("unknown"))
    )
    return offsets.where(rewind | lost).select(
        *anomaly_row(
            kind,
            cause,
            F.when(rewind, replayed).otherwise(F.lit(1)),
            messages_replayed=F.when(rewind, replayed),
            offsets_lost=F.when(~rewind, F.lit(1)),
        )
    )


def with_group_state(rows: DataFrame, history: DataFrame, *, since: bool = False) -> DataFrame:
    """``rows`` (few: anomalies) with the group's state just before each (``group_state``: Stable, Empty,
    Dead, Unknown for a group known only by KIP-848 epochs, null if never seen) and ``group_deleted``
    (the next group record of the group is its tombstone); ``since``: also ``group_since``, the time (ms)
    of the group's last record before the row (when it entered that state, unless its record repeated it)."""
    groups = history.where(F.col("kind").isin(*GROUP_KINDS)).select(
        "cluster",
        "group",
        *ORDER,
        F.coalesce("group_state", F.lit("Unknown")).alias("_state"),
        F.col("group_state").alias("_explicit"),
        (F.col("kind") == schema.GROUP_TOMBSTONE).alias("_dead"),
        F.col("timestamp").alias("_ts"),
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
    extra = [F.last("_ts", ignorenulls=True).over(upto).alias("group_since")] if since else []
    return (
        both.select(
            "*",
            state.alias("_group_state"),
            F.coalesce(F.first("_dead", ignorenulls=True).over(after), F.lit(False)).alias("group_deleted"),
            *extra,
        )
        .where(F.col("_is_row") == 1)
        .drop("_is_row", "_state", "_explicit", "_dead", "_ts", "group_state")
        .withColumnRenamed("_group_state", "group_state")
    )


def idle_moves(offsets: DataFrame, history: DataFrame) -> DataFrame:
    """The forward commits of :func:`offset_records` ``offsets`` made while the group was Empty (classic
    group records say so; a KIP-848 group's epochs do not say how its membership changed), with
    ``group_since`` (:func:`with_group_state`): only the groups ever Empty are looked at, a broadcast
    semi-join before the window over their records."""
    groups = history.where(F.col("kind").isin(*GROUP_KINDS))
    empty = groups.where(F.col("group_state") == "Empty").select("cluster", "group").distinct()
    forward = offsets.where((F.col("kind") == schema.COMMIT) & (F.col("offset") > F.col("prev_offset")))
    moves = forward.join(F.broadcast(empty), ["cluster", "group"], "left_semi")
    stated = with_group_state(moves, groups, since=True)
    return stated.where(F.col("group_state") == "Empty").drop("group_state", "group_deleted")


def find_anomalies(
    history: DataFrame,
    offsets: DataFrame,
    ranges: DataFrame | None = None,
    settings: AnalysisSettings | None = None,
) -> DataFrame:
    """Every anomaly (columns :data:`ANOMALY_COLUMNS`); ``offsets`` is :func:`offset_records` (or, without
    ``ranges``, :func:`rewind_and_loss_rows`)."""
    settings = settings or AnalysisSettings()
    found = rewinds_and_losses(offsets, settings).withColumn("_exact", F.lit(False))
    if ranges is not None:
        cut = truncation_moves(offsets, ranges)
        # a move back from beyond a truncated log end replaces the plain rewind: a skip at or past the
        # truncated end, else a rewind of only what the truncation kept
        found = found.join(cut.select(*KEY, *ORDER), [*KEY, *ORDER], "left_anti").unionByName(cut)
        for part in (skips(offsets, ranges), outside_log(offsets, ranges)):
            found = found.unionByName(part.withColumn("_exact", F.lit(False)))
        operated = operator_resets(idle_moves(offsets, history), ranges)
        found = found.unionByName(operated.withColumn("_exact", F.lit(True)))
    found = with_group_state(found, history)
    # offsets_lost only while consuming (alerts.lost's deleted_while_consuming): the group has members. A
    # group the archive never describes has none (members are written to __consumer_offsets; only a tool
    # or an assign() consumer commits without). An Empty group's offsets vanish under nobody (an OffsetDelete,
    # DeleteGroups or expiry: reported online as info/warning per group, not here). The members'
    # subscriptions are not in the archive: an OffsetDelete of a topic a live group does not subscribe to
    # is counted here, online it is admin_offset_delete.
    idle = F.col("group_state").isin("Empty", "Dead")
    consuming = F.when(F.col("group_state").isNull(), F.lit(False)).otherwise(~idle)
    # DeleteGroups deletes only a group without members: an Empty classic group, or a KIP-848 group, which
    # the archive knows by its epochs only (Unknown; its members leave by member records)
    deleting = F.col("group_deleted") & F.col("group_state").isin("Empty", "Dead", "Unknown")
    keep = (F.col("kind") != OFFSETS_LOST) | (consuming & ~deleting)
    empty = F.coalesce(F.col("group_state") == "Empty", F.lit(False))
    admin = F.col("kind").isin(OFFSET_REWIND, OFFSET_SKIP) & empty & ~F.col("_exact")
    # an operator's reset reads nothing on the way: all of a skip is skipped (alerts.skip)
    admin_skip = admin & (F.col("kind") == OFFSET_SKIP)
    jumped = F.col("new_offset") - F.col("old_offset")
    cause = (
        F.when(
            F.col("kind") == OFFSETS_LOST,
            F.when(F.col("group_deleted"), F.lit("group_deleted_while_consuming")).otherwise(
                F.lit("deleted_while_consuming")
            ),
        )
        .when(admin, F.lit("admin_reset"))
        .otherwise(F.col("cause"))
    )
    return (
        found.where(keep)
        .withColumn("cause", cause)
        .withColumn("magnitude", F.when(admin_skip, jumped).otherwise(F.col("magnitude")))
        .withColumn("messages_skipped", F.when(admin_skip, jumped).otherwise(F.col("messages_skipped")))
        # an operator's tool goes where it is told: no bounds, the figures are exact
        .withColumn("messages_skipped_max", F.when(~admin, F.col("messages_skipped_max")))
        .withColumn("messages_read_past_max", F.when(~admin, F.col("messages_read_past_max")))
        .select(*ANOMALY_COLUMNS)
    )
