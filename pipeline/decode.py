"""Decoding ``__consumer_offsets`` inside Spark with built-in SQL expressions (no Python on the hot path).

:func:`decode_history` turns a raw frame (:data:`pipeline.schema.RAW_DDL`) into the history frame: offset
commits (types 0 and 1, value versions 0–4+, TopicId tag), offset tombstones, classic group state
(type 2 value v0–v4+ up to its member count), KIP-848 group epochs (type 3) and group tombstones. It
follows :mod:`collectors.codec` field for field; what the codec calls Unknown or corrupt is dropped here
(:func:`pipeline.records.decode_records` keeps it). Every step is one ``select`` whose new columns the
next step reads, so each position is computed once and the generated code stays small.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipeline import schema
from pipeline.sqlbytes import i16, i32, i64, latin1, topic_id, u8, utf8, uvarint, uvarint_size


def _step(df: DataFrame, drop: tuple[str, ...] = (), **new: str) -> DataFrame:
    """``df`` without ``drop``, plus the named SQL expressions."""
    keep = [c for c in df.columns if c not in drop]
    return df.select(*keep, *[F.expr(text).alias(name) for name, text in new.items()])


def where(df: DataFrame, condition: str) -> DataFrame:
    """``df.where(condition)`` evaluated on the computed columns, never pushed below them.

    The optimizer would push a filter through the projections under it, replacing each column by the
    expression that computes it; over these nested byte positions that multiplies the expression past
    what code generation accepts (64 KB per method). ``spark_partition_id()`` is non-deterministic, and
    nothing is pushed through a projection that holds one.
    """
    fenced = df.select("*", F.spark_partition_id().alias("_fence"))
    return fenced.where(f"({condition}) and _fence >= 0").drop("_fence")


def key_fields(raw: DataFrame) -> DataFrame:
    """Adds ``rt`` (record type), ``ver`` (value version, null for tombstones), ``group``, ``topic`` and
    ``partition`` (offset keys), ``key_ok`` (the key holds what its lengths announce) and the byte text
    ``_vh`` of the value (:func:`pipeline.sqlbytes.latin1`) for the value decoders."""
    df = _step(raw, _kh=latin1("key"), _vh=latin1("value"))
    df = _step(df, rt=i16("_kh", 1), ver=i16("_vh", 1), _glen=i16("_kh", 3))
    df = _step(
        df, group=utf8("key", 5, "_glen"), _tlen=f"case when rt in (0, 1) then {i16('_kh', '5 + _glen')} end"
    )
    return _step(
        df,
        drop=("_kh", "_glen", "_tlen"),
        topic=f"case when rt in (0, 1) then {utf8('key', '7 + _glen', '_tlen')} end",
        partition=f"case when rt in (0, 1) then {i32('_kh', '7 + _glen + _tlen')} end",
        key_ok="_glen >= 0 and case when rt in (0, 1) then _tlen >= 0 and length(key) >= 10 + _glen + _tlen "
        "else length(key) >= 4 + _glen end",
    )


def commit_values(df: DataFrame) -> DataFrame:
    """OffsetCommitValue fields (meaningful where ``rt`` is 0/1 and ``ver`` >= 0) and ``value_ok``."""
    df = _step(
        df,
        _mpos="case when ver >= 3 then 15 else 11 end",
        _m0=u8("_vh", 15),
        _m1=u8("_vh", 16),
        _m2=u8("_vh", 17),
    )
    df = _step(
        df,
        drop=("_m0", "_m1", "_m2"),
        _mlen=f"case when ver >= 4 then {uvarint('_m0', '_m1', '_m2')} - 1 else {i16('_vh', '_mpos')} end",
        _mstart=f"case when ver >= 4 then 15 + {uvarint_size('_m0', '_m1')} else _mpos + 2 end",
    )
    df = _step(df, drop=("_mpos",), _tags="_mstart + _mlen + 8", _epoch=i32("_vh", 11))
    # Tags are written in ascending order, so TopicId (tag 0) can only be the first one.
    has_id = (
        f"ver >= 4 and {u8('_vh', '_tags')} between 1 and 127 "
        f"and {u8('_vh', '_tags + 1')} = 0 and {u8('_vh', '_tags + 2')} = 16"
    )
    return _step(
        df,
        drop=("_mlen", "_mstart", "_tags", "_epoch"),
        offset=i64("_vh", 3),
        leader_epoch="case when ver >= 3 and _epoch != -1 then _epoch end",
        metadata=utf8("value", "_mstart", "_mlen"),
        commit_timestamp=i64("_vh", "_mstart + _mlen"),
        expire_timestamp=f"case when ver = 1 then {i64('_vh', '_mstart + _mlen + 8')} end",
        topic_id=f"case when {has_id} then {topic_id('value', '_tags + 3')} end",
        value_ok="_mlen between 0 and 32767 and length(value) >= "
        "case when ver = 1 then _tags + 7 when ver >= 4 then _tags else _tags - 1 end",
    )


def _string_at(df: DataFrame, pos: str, name: str) -> DataFrame:
    """Adds ``name`` (length of the nullable string at ``pos``) and ``name_h`` (its header size)."""
    df = _step(df, _b0=u8("_vh", pos), _b1=u8("_vh", f"{pos} + 1"), _b2=u8("_vh", f"{pos} + 2"))
    return _step(
        df,
        drop=("_b0", "_b1", "_b2"),
        **{
            name: f"case when ver >= 4 then {uvarint('_b0', '_b1', '_b2')} - 1 else {i16('_vh', pos)} end",
            f"{name}_h": f"case when ver >= 4 then {uvarint_size('_b0', '_b1')} else 2 end",
        },
    )


def group_values(df: DataFrame) -> DataFrame:
    """GroupMetadataValue up to its member count (``rt`` 2) and the KIP-848 group epoch (``rt`` 3): adds
    ``protocol_type``, ``generation``, ``members`` and ``group_ok``."""
    df = _string_at(df, "3", "_l1")  # protocolType
    df = _step(df, _p1="3 + _l1_h + _l1")  # generation, then protocol (nullable)
    df = _string_at(df, "_p1 + 4", "_l2")
    df = _step(df, _p3="_p1 + 4 + _l2_h + greatest(_l2, 0)")  # leader (nullable)
    df = _string_at(df, "_p3", "_l3")
    df = _step(df, _p5="_p3 + _l3_h + greatest(_l3, 0) + case when ver >= 2 then 8 else 0 end")  # members
    df = _step(df, _c0=u8("_vh", "_p5"), _c1=u8("_vh", "_p5 + 1"), _c2=u8("_vh", "_p5 + 2"))
    members = f"case when ver >= 4 then {uvarint('_c0', '_c1', '_c2')} - 1 else {i32('_vh', '_p5')} end"
    temporary = ("_l1", "_l1_h", "_p1", "_l2", "_l2_h", "_p3", "_l3", "_l3_h", "_p5", "_c0", "_c1", "_c2")
    return _step(
        df,
        drop=temporary,
        protocol_type=f"case when rt = 2 then {utf8('value', '3 + _l1_h', '_l1')} else 'consumer' end",
        generation=f"case when rt = 2 then {i32('_vh', '_p1')} else {i32('_vh', 3)} end",
        members=f"case when rt = 2 then {members} end",
        group_ok="case when rt = 2 then _l1 >= 0 and _l2 >= -1 and _l3 >= -1 "
        "and length(value) >= _p5 + case when ver >= 4 then 0 else 3 end "
        "else ver = 0 and length(value) >= 6 end",
    )


def decode_history(raw: DataFrame) -> DataFrame:
    """The history frame (:data:`pipeline.schema.HISTORY_COLUMNS`) of a raw frame, in SQL only."""
    keyed = where(key_fields(raw), "rt between 0 and 3 and key_ok")
    offsets = commit_values(where(keyed, "rt <= 1 and (value is null or ver >= 0)"))
    offsets = where(offsets, "value is null or value_ok").select(
        *_BASE,
        F.expr(f"case when value is null then '{schema.OFFSET_TOMBSTONE}' else '{schema.COMMIT}' end").alias(
            "kind"
        ),
        F.col("rt").alias("record_type"),
        "group",
        "topic",
        "partition",
        *[F.expr(f"case when value is not null then {c} end").cast(t).alias(c) for c, t in _COMMIT_VALUE],
        *[F.lit(None).cast(t).alias(c) for c, t in _GROUP_VALUE],
    )
    groups = group_values(where(keyed, "rt >= 2 and (value is null or (rt = 2 and ver >= 0) or ver = 0)"))
    groups = where(groups, "value is null or group_ok").select(
        *_BASE,
        F.expr(
            f"case when value is null then '{schema.GROUP_TOMBSTONE}' "
            f"when rt = 2 then '{schema.GROUP_METADATA}' else '{schema.CONSUMER_GROUP_METADATA}' end"
        ).alias("kind"),
        F.col("rt").alias("record_type"),
        "group",
        *[F.lit(None).cast(t).alias(c) for c, t in _COMMIT_KEY + _COMMIT_VALUE],
        F.expr(
            "case when value is null then 'Dead' when rt = 2 and members > 0 then 'Stable' "
            "when rt = 2 then 'Empty' end"
        ).alias("group_state"),
        *[F.expr(f"case when value is not null then {c} end").cast(t).alias(c) for c, t in _GROUP_VALUE[1:]],
    )
    return offsets.unionByName(groups).select(*schema.HISTORY_COLUMNS)


_BASE = ("cluster", "source_partition", "source_offset", "timestamp")
_COMMIT_KEY = [("topic", "string"), ("partition", "int")]
_COMMIT_VALUE = [
    ("offset", "bigint"),
    ("leader_epoch", "int"),
    ("metadata", "string"),
    ("commit_timestamp", "bigint"),
    ("expire_timestamp", "bigint"),
    ("topic_id", "string"),
]
_GROUP_VALUE = [
    ("group_state", "string"),
    ("generation", "int"),
    ("protocol_type", "string"),
    ("members", "int"),
]
