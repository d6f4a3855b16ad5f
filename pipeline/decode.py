"""Offset commit keys and values decoded with built-in Spark SQL expressions, for the ``records`` frame
(:func:`pipeline.records.decode_records`): offset commits (types 0 and 1, value versions 0–4+, TopicId
tag) field for field as :mod:`collectors.codec` reads them. Every step is one ``select`` whose new columns
the next step reads, so each position is computed once and the generated code stays small.

The history frame of the job is decoded in Arrow batches instead (:mod:`pipeline.arrow_decode`): several
times faster than these byte-by-byte string expressions.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

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
