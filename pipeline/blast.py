"""Incidents and their blast radius (pure DataFrame -> DataFrame transforms).

An incident is a run of anomalies of one group in which each follows the previous one by at most
``gap_seconds``; its id is ``<cluster>/<group>/<first anomaly time, UTC>``. ``blast_radius`` has one row
per incident and group-partition: messages replayed (rewinds), messages skipped (skips), offsets lost
(tombstones while consuming), messages lost (deleted unread), the first and last affected commit time.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

BLAST_COLUMNS = (
    "incident_id",
    "cluster",
    "group",
    "topic",
    "partition",
    "anomalies",
    "kinds",
    "messages_replayed",
    "messages_skipped",
    "offsets_lost",
    "messages_lost",
    "first_commit_time",
    "last_commit_time",
)


def incidents(anomalies: DataFrame, gap_seconds: float) -> DataFrame:
    """``anomalies`` with ``incident_id``: consecutive anomalies of a group at most ``gap_seconds`` apart."""
    w = Window.partitionBy("cluster", "group").orderBy(
        "at", "source_partition", "source_offset", "kind", "topic", "partition"
    )
    gap = F.col("at") - F.lag("at").over(w)
    starts = anomalies.select(
        "*", F.when(gap.isNull() | (gap > gap_seconds * 1000), 1).otherwise(0).alias("_new")
    )
    numbered = starts.select("*", F.sum("_new").over(w.rowsBetween(Window.unboundedPreceding, 0)).alias("_n"))
    first = F.min("at").over(Window.partitionBy("cluster", "group", "_n"))
    stamp = F.date_format(F.timestamp_millis(first), "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")
    return numbered.select("*", F.concat_ws("/", "cluster", "group", stamp).alias("incident_id")).drop(
        "_new", "_n"
    )


def blast_radius(anomalies: DataFrame, gap_seconds: float) -> DataFrame:
    """The ``blast_radius`` table (columns :data:`BLAST_COLUMNS`)."""
    per = incidents(anomalies, gap_seconds).groupBy("incident_id", "cluster", "group", "topic", "partition")
    out = per.agg(
        F.count(F.lit(1)).alias("anomalies"),
        F.array_sort(F.collect_set("kind")).alias("kinds"),
        F.coalesce(F.sum("messages_replayed"), F.lit(0)).cast("bigint").alias("messages_replayed"),
        F.coalesce(F.sum("messages_skipped"), F.lit(0)).cast("bigint").alias("messages_skipped"),
        F.coalesce(F.sum("offsets_lost"), F.lit(0)).cast("bigint").alias("offsets_lost"),
        F.coalesce(F.sum("messages_lost"), F.lit(0)).cast("bigint").alias("messages_lost"),
        F.timestamp_millis(F.min("at")).alias("first_commit_time"),
        F.timestamp_millis(F.max("at")).alias("last_commit_time"),
    )
    return out.select(*BLAST_COLUMNS)


def incident_summary(blast: DataFrame) -> DataFrame:
    """One row per incident, worst first: totals over its group-partitions."""
    per = blast.groupBy("incident_id", "cluster", "group").agg(
        F.count(F.lit(1)).alias("partitions"),
        F.sum("anomalies").alias("anomalies"),
        F.array_sort(F.array_distinct(F.flatten(F.collect_list("kinds")))).alias("kinds"),
        F.sum("messages_replayed").alias("messages_replayed"),
        F.sum("messages_skipped").alias("messages_skipped"),
        F.sum("offsets_lost").alias("offsets_lost"),
        F.sum("messages_lost").alias("messages_lost"),
        F.min("first_commit_time").alias("first_commit_time"),
        F.max("last_commit_time").alias("last_commit_time"),
    )
    impact = F.col("messages_replayed") + F.col("messages_skipped") + F.col("messages_lost")
    return per.select("*", impact.alias("messages_affected")).orderBy(
        F.desc("messages_affected"), F.desc("offsets_lost"), F.desc("anomalies"), "incident_id"
    )
