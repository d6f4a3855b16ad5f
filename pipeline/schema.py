"""Column layouts shared by the archive, the decoders and the analysis (plain data, no Spark import).

Three frames flow through the pipeline:

* **raw** — one ``__consumer_offsets`` record as stored: ``cluster, source_partition, source_offset,
  timestamp`` (record time, ms) and the ``key``/``value`` bytes (``value`` null = tombstone);
* **history** — what the archive holds and every source becomes: one row per offset commit, offset
  tombstone, classic/KIP-848 group state record or group tombstone (``kind``), decoded;
* the output tables ``commits``, ``anomalies`` and ``blast_radius`` (see :mod:`pipeline.analysis`).
"""

from __future__ import annotations

# history.kind values
COMMIT = "commit"
OFFSET_TOMBSTONE = "offset_tombstone"
GROUP_METADATA = "group_metadata"  # classic group (type 2): state from its member count
CONSUMER_GROUP_METADATA = "consumer_group_metadata"  # KIP-848 group epoch (type 3)
GROUP_TOMBSTONE = "group_tombstone"  # null value for a type 2 or 3 key: the group was deleted
KINDS = (COMMIT, OFFSET_TOMBSTONE, GROUP_METADATA, CONSUMER_GROUP_METADATA, GROUP_TOMBSTONE)

# (name, Arrow/Spark type name, nullable). Partition columns of the archive (cluster, date, hour) are
# directory names there, not file columns.
HISTORY_FIELDS: tuple[tuple[str, str, bool], ...] = (
    ("source_partition", "int", False),
    ("source_offset", "bigint", False),
    ("timestamp", "bigint", False),  # record timestamp, ms since the epoch
    ("kind", "string", False),
    ("record_type", "int", False),
    ("group", "string", False),
    ("topic", "string", True),
    ("partition", "int", True),
    ("offset", "bigint", True),
    ("leader_epoch", "int", True),
    ("metadata", "string", True),
    ("commit_timestamp", "bigint", True),  # commits: the commit's own time; else null
    ("expire_timestamp", "bigint", True),
    ("topic_id", "string", True),
    ("group_state", "string", True),  # Stable / Empty (classic), Dead (group tombstone), else null
    ("generation", "int", True),  # classic generation or KIP-848 group epoch
    ("protocol_type", "string", True),
    ("members", "int", True),
)
HISTORY_COLUMNS = ("cluster", *(name for name, _, _ in HISTORY_FIELDS))

ARCHIVE_PARTITIONS = ("cluster", "date", "hour")


def ddl(fields: tuple[tuple[str, str, bool], ...]) -> str:
    """A Spark DDL schema string (``a int, b string``) for ``fields``; names are back-quoted."""
    return ", ".join(f"`{name}` {kind}{'' if nullable else ' NOT NULL'}" for name, kind, nullable in fields)


HISTORY_DDL = "`cluster` string NOT NULL, " + ddl(HISTORY_FIELDS)
RAW_DDL = (
    "`cluster` string NOT NULL, `source_partition` int NOT NULL, `source_offset` bigint NOT NULL, "
    "`timestamp` bigint NOT NULL, `key` binary, `value` binary"
)
