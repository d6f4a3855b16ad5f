""":class:`alerts.state.DetectionState` to JSON and back, for keeping it across restarts.

``FORMAT`` changes whenever the shape changes; a saved state of a format not in ``READS`` is ignored
(detection then starts from an empty state, as on a first start). Format 2 writes each sample history as
two base64 arrays (:meth:`alerts.history.RangeHistory.encoded`) instead of a JSON array per sample: a
tenth of the time to write and read on a cluster where every partition moves. Format 3 writes each
committed offset and each partition as an array of its fields (their names once, in ``commit_fields``
and ``partition_fields``) instead of an object per point, and the body is encoded a chunk of rows at a
time: at 50,000 group-partitions the body is a third smaller, a save a quarter less CPU, and the whole
state is never held a second time as JSON-ready lists beside its text. Format 4 (:func:`encode`,
:func:`load`) is format 3 cut into parts: the small members are the body, and each chunk of a large
section's rows is a part of its own (a row of the store's ``detection_state_parts``), so no save or load
ever holds the 18 MB of a 50,000 group-partition state as one text (nor does SQLite, a copy of it).
Format 5 is format 4 with the partitions' observation times out of their rows (``partitions_seen``: the
last offsets observation's time and the few partitions observed at another) and each range history
saved as the state keeps it (its run not carried to the partition's last observation): a partition that
did not move saves the very row objects it saved last time. Formats 1 to 4 are still read. A save by
change (:func:`encode_changes`) encodes and writes only the parts whose rows are not the very objects of
the last save's part at their place: the store then holds byte for byte what :func:`encode` gives.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, fields
from itertools import chain, groupby, islice
from operator import add, attrgetter, is_, itemgetter
from typing import Any

from alerts.history import OffsetHistory, RangeHistory
from alerts.state import (
    BlindSpan,
    CommitKey,
    CommitPoint,
    DetectionState,
    GroupPoint,
    MetricKey,
    OffsetSample,
    PartitionKey,
    PartitionPoint,
    PartitionsSeen,
    PendingLoss,
    PendingRewind,
    RangeSample,
    Recreation,
)
from store.alerts import Part  # (large section, a JSON array of up to CHUNK_ROWS of its rows)

FORMAT = 5
READS = (1, 2, 3, 4, 5)
CHUNK_ROWS = 5_000  # rows of a large section encoded at a time
# A part of a save by change (:func:`encode_changes`): its section and text, None where the store's is kept
Change = tuple[str, str | None]
# The rows a part was encoded from: its section, their keys and their values (the very objects)
Chunk = tuple[str, list[Any], list[Any]]


def encode(state: DetectionState) -> tuple[str, Iterator[Part]]:
    """Format 5: the small members as one JSON object, and the large sections' parts, each a JSON array
    of up to :data:`CHUNK_ROWS` rows, encoded as they are taken."""
    return _encode(_small(state)), ((name, _text(name, ks, vs)) for name, ks, vs in _chunked(state))


def encode_changes(
    state: DetectionState, held: Sequence[Chunk | None]
) -> tuple[str, Iterator[Change], list[Chunk | None]]:
    """:func:`encode` against ``held``, the chunks of the save the store holds (in order, as the last
    call returned them): a part whose section, keys and value objects are those of the held chunk at its
    place is not encoded again (its text None: the store keeps the text it has, which is what encoding
    it again would give, the values being frozen). Once the parts are all taken, the list returned holds
    the chunks of this save to pass next time.

    A section none of whose parts was kept although held is not held again (None in its places): its
    values all change between saves (a busy cluster's committed offsets and their histories move every
    cycle), and holding them would keep each replaced one alive until the next save (~9 MB at
    20,000 partitions and 50,000 group-partitions) for nothing. With nothing ``held`` (a first save)
    every section is held, to be tried."""
    chunks: list[Chunk | None] = []

    def parts() -> Iterator[Change]:
        kept: set[str] = set()
        for seq, chunk in enumerate(_chunked(state)):
            chunks.append(chunk)
            name, ks, vs = chunk
            old = held[seq] if seq < len(held) else None
            if old is not None and _same(old, chunk):
                kept.add(name)
                yield name, None
            else:
                yield name, _text(name, ks, vs)
        if held:
            chunks[:] = [c if c is not None and c[0] in kept else None for c in chunks]

    return _encode(_small(state)), parts(), chunks


def dumps(state: DetectionState) -> str:
    """Format 3: the whole state as one JSON object (its large sections encoded a chunk at a time)."""
    pieces = [_encode(_small(state))[:-1]]
    for name in _SECTIONS:
        pieces.append(f",{_encode(name)}:[")
        pieces.append(",".join(_text(name, ks, vs)[1:-1] for ks, vs in _section(state, name)))
        pieces.append("]")
    pieces.append("}")
    return "".join(pieces)


def _small(state: DetectionState) -> dict[str, Any]:
    return {
        "groups": {
            k: dict(zip(_GROUP_FIELDS, _GROUP_VALUES(v), strict=True)) for k, v in state.groups.items()
        },
        "counters": [
            [k.broker, k.name, [list(lab) for lab in k.labels], v] for k, v in state.counters.items()
        ],
        "pending_rewinds": [
            [list(p.key), asdict(p.old), asdict(p.new), p.group_state] for p in state.pending_rewinds
        ],
        "pending_losses": [
            [list(p.key), asdict(p.old), p.at, p.group_state, p.source, p.cause, p.members_topics]
            for p in state.pending_losses
        ],
        "tail_positions": {str(k): v for k, v in state.tail_positions.items()},
        "committed_polled_at": state.committed_polled_at,
        "offsets_retention_seconds": state.offsets_retention_seconds,
        "unclean_counter_seen_at": state.unclean_counter_seen_at,
        "offsets_seen_at": state.offsets_seen_at,
        "blind_spans": state.blind_spans,
        "tombstoned": [[*k, at] for k, at in state.tombstoned.items()],
        "recreated": [[*k, r.old_id, r.new_id, r.gone_at, r.seen_at] for k, r in state.recreated.items()],
        "partitions_seen": {"at": state.seen.at, "other": [[*k, at] for k, at in state.seen.other.items()]},
        "commit_fields": _COMMIT_FIELDS,
        "partition_fields": _PARTITION_FIELDS,
    }


_SECTIONS = ("partitions", "ranges", "commits", "commit_history")  # the large ones, in the order saved


def _chunked(state: DetectionState) -> Iterator[Chunk]:
    """The large sections' chunks, in the order saved."""
    for name in _SECTIONS:
        for ks, vs in _section(state, name):
            yield name, ks, vs


def _section(state: DetectionState, name: str) -> Iterator[tuple[list[Any], list[Any]]]:
    """The keys and values of a large section, up to :data:`CHUNK_ROWS` at a time (a range history as the
    state keeps it: read with its partition's point and observation time, :func:`alerts.history.through`)."""
    mapping: Mapping[Any, Any] = getattr(state, name)
    keys, values = iter(mapping), iter(mapping.values())
    while ks := list(islice(keys, CHUNK_ROWS)):
        yield ks, list(islice(values, CHUNK_ROWS))


def _same(held: Chunk, chunk: Chunk) -> bool:
    return held[0] == chunk[0] and held[1] == chunk[1] and all(map(is_, held[2], chunk[2]))


def _text(name: str, keys: list[Any], values: list[Any]) -> str:
    """A chunk's rows as a JSON array: each row its key's fields, then its value's (a point's fields in
    ``commit_fields``/``partition_fields`` order, a history's two arrays). The points' rows are built
    in C (a key tuple plus a tuple of the fields)."""
    if name == "partitions":
        return _encode(list(map(add, keys, map(_PARTITION_VALUES, values))))
    if name == "commits":
        return _encode(list(map(add, keys, map(_COMMIT_VALUES, values))))
    kind = RangeHistory if name == "ranges" else OffsetHistory
    return _encode([[*k, *kind.of(v).encoded()] for k, v in zip(keys, values, strict=True)])


def _encode(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def load(body: str, format: int = FORMAT, parts: Iterable[Part] = ()) -> DetectionState:
    """The state saved as ``body`` in ``format`` (one of ``READS``) with its ``parts`` (format 4, in the
    order :func:`encode` gave them; each decoded in turn). Raises ``ValueError`` (or ``KeyError`` /
    ``TypeError``) on a malformed one."""
    if format < 4:
        return loads(body, format)
    small = json.loads(body)
    if not isinstance(small, dict):
        raise ValueError("a saved state is a JSON object")
    built: dict[str, Any] = {}
    for name, group in groupby(parts, itemgetter(0)):
        if name not in _BUILDERS or name in built:
            raise ValueError(f"unexpected part {name!r}")
        built[name] = _BUILDERS[name][1](small, chain.from_iterable(_array(rows) for _, rows in group))
    return _state(
        small,
        built.get("partitions", {}),
        built.get("ranges", {}),
        built.get("commits", {}),
        built.get("commit_history", {}),
    )


def _array(text: str) -> list[Any]:
    rows = json.loads(text)
    if not isinstance(rows, list):
        raise ValueError("a part of a saved state is a JSON array")
    return rows


def loads(text: str, format: int = 3) -> DetectionState:
    """The state of a body written in ``format`` (one of ``READS``). Raises ``ValueError`` (or
    ``KeyError``/``TypeError``) on a malformed body."""
    if format >= 3:
        return _streamed(text)
    b: dict[str, Any] = json.loads(text)
    if format == 1:
        ranges = {PartitionKey(t, p): RangeHistory.of(map(RangeSample._make, v)) for t, p, v in b["ranges"]}
        history = {
            CommitKey(g, t, p): OffsetHistory.of(map(OffsetSample._make, v))
            for g, t, p, v in b["commit_history"]
        }
    else:
        ranges = _range_rows(b, iter(b["ranges"]))
        history = _history_rows(b, iter(b["commit_history"]))
    return _state(b, _partitions(b, format), ranges, _commits(b, format), history)


def _state(
    b: dict[str, Any],
    partitions: dict[PartitionKey, PartitionPoint],
    ranges: dict[PartitionKey, RangeHistory],
    commits: dict[CommitKey, CommitPoint],
    history: dict[CommitKey, OffsetHistory],
) -> DetectionState:
    return DetectionState(
        partitions=partitions,
        seen=_seen(b),
        ranges=ranges,
        commits=commits,
        commit_history=history,
        groups={k: _group(v) for k, v in b["groups"].items()},
        counters={
            MetricKey(broker, name, tuple((a, c) for a, c in labels)): value
            for broker, name, labels, value in b["counters"]
        },
        pending_rewinds=tuple(
            PendingRewind(CommitKey(*k), CommitPoint(**old), CommitPoint(**new), state)
            for k, old, new, state in b["pending_rewinds"]
        ),
        pending_losses=tuple(
            PendingLoss(CommitKey(*k), CommitPoint(**old), at, state, source, cause, _tuple(topics))
            for k, old, at, state, source, cause, topics in b.get("pending_losses", ())
        ),
        tail_positions={int(k): v for k, v in b["tail_positions"].items()},
        committed_polled_at=b["committed_polled_at"],
        offsets_retention_seconds=b.get("offsets_retention_seconds"),  # absent in states saved before it
        unclean_counter_seen_at=b.get("unclean_counter_seen_at"),
        offsets_seen_at=b.get("offsets_seen_at"),
        blind_spans=tuple(BlindSpan(*s) for s in b.get("blind_spans", ())),
        tombstoned={CommitKey(g, t, p): at for g, t, p, at in b.get("tombstoned", ())},
        recreated={  # absent in states saved before it
            PartitionKey(t, p): Recreation(*r) for t, p, *r in b.get("recreated", ())
        },
    )


def _seen(b: dict[str, Any]) -> PartitionsSeen:
    """When the partitions were observed: format 5's ``partitions_seen``, else each row's own time (as
    :func:`_partition` found them; ``at`` the last offsets observation's)."""
    seen = b.get("partitions_seen")
    if seen is None:
        at = b.get("offsets_seen_at")
        times: dict[PartitionKey, float] = b.get(_ROW_TIMES, {})
        return PartitionsSeen(at, {k: t for k, t in times.items() if t != at})
    return PartitionsSeen(seen["at"], {PartitionKey(_name(t), p): at for t, p, at in seen["other"]})


def _streamed(text: str) -> DetectionState:
    """A format-3 body read a member at a time: each large section's rows become state as they are read.

    The sections need the field names saved before them (:func:`dumps` writes them first); a body with
    them after is still read, its rows then kept until the names arrive."""
    small: dict[str, Any] = {}
    built: dict[str, Any] = {}
    held: dict[str, list[list[Any]]] = {}
    for key, value in _members(text):
        if key not in _BUILDERS:
            small[key] = value
        elif _BUILDERS[key][0] is None or _BUILDERS[key][0] in small:
            built[key] = _BUILDERS[key][1](small, value)
        else:
            held[key] = list(value)
    for key, rows in held.items():
        built[key] = _BUILDERS[key][1](small, iter(rows))
    return _state(
        small,
        built["partitions"],
        built["ranges"],
        built["commits"],
        built["commit_history"],
    )


_DECODER = json.JSONDecoder()
_SPACE = " \t\n\r"


def _members(text: str) -> Iterator[tuple[str, Any]]:
    """The top-level object's members in order; a large section's value is an iterator over its rows,
    to be read before the next member. Raises ``ValueError`` where the body is not JSON."""
    pos = _skip(text, 0)
    if text[pos : pos + 1] != "{":
        raise ValueError("a saved state is a JSON object")
    pos = _skip(text, pos + 1)
    if text[pos : pos + 1] == "}":
        return
    while True:
        key, pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, pos)
        if not isinstance(key, str) or text[pos : pos + 1] != ":":
            raise ValueError(f"a member name and ':' expected at {pos}")
        pos = _skip(text, pos + 1)
        if key in _BUILDERS and text[pos : pos + 1] == "[":
            end: list[int] = []
            rows = _rows(text, pos + 1, end)
            yield key, rows
            for _ in rows:  # whatever the caller did not read
                pass
            pos = end[0]
        else:
            value, pos = _DECODER.raw_decode(text, pos)
            yield key, value
        pos = _skip(text, pos)
        sep = text[pos : pos + 1]
        if sep == "}":
            if _skip(text, pos + 1) != len(text):
                raise ValueError("text after the saved state")
            return
        if sep != ",":
            raise ValueError(f"',' or '}}' expected at {pos}")
        pos = _skip(text, pos + 1)


def _rows(text: str, pos: int, end: list[int]) -> Iterator[Any]:
    """The elements of the JSON array whose ``[`` is just before ``pos``, decoded one at a time; once
    they are all read, ``end[0]`` is the position after its ``]``."""
    decode = _DECODER.raw_decode
    pos = _skip(text, pos)
    if text[pos : pos + 1] != "]":
        while True:
            row, pos = decode(text, pos)
            yield row
            pos = _skip(text, pos)
            sep = text[pos : pos + 1]
            if sep == "]":
                break
            if sep != ",":
                raise ValueError(f"',' or ']' expected at {pos}")
            pos = _skip(text, pos + 1)
    end.append(pos + 1)


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _SPACE:
        pos += 1
    return pos


_COMMIT_FIELDS = tuple(f.name for f in fields(CommitPoint))
_PARTITION_FIELDS = tuple(f.name for f in fields(PartitionPoint))
# a point's field values in that order, as a tuple (``astuple`` deep-copies every value)
_COMMIT_VALUES = attrgetter(*_COMMIT_FIELDS)
_PARTITION_VALUES = attrgetter(*_PARTITION_FIELDS)
_GROUP_FIELDS = tuple(f.name for f in fields(GroupPoint))
_GROUP_VALUES = attrgetter(*_GROUP_FIELDS)  # (asdict deep-copies: ~5 us a group)


def _commits(b: dict[str, Any], format: int) -> dict[CommitKey, CommitPoint]:
    if format < 3:
        return {CommitKey(g, t, p): CommitPoint(**v) for g, t, p, v in b["commits"]}
    return _commit_rows(b, iter(b["commits"]))


def _commit_rows(b: dict[str, Any], rows: Iterator[list[Any]]) -> dict[CommitKey, CommitPoint]:
    names = tuple(b["commit_fields"])
    if names == _COMMIT_FIELDS:  # saved by this release: positional, no dict per point
        width = len(names)
        out = {}
        for g, t, p, *v in rows:
            if len(v) != width:
                raise ValueError(f"a saved point is not {width + 3} values long")
            out[CommitKey(_name(g), _name(t), p)] = CommitPoint(*v)
        return out
    return {
        CommitKey(_name(g), _name(t), p): CommitPoint(**dict(zip(names, v, strict=True)))
        for g, t, p, *v in rows
    }


def _partitions(b: dict[str, Any], format: int) -> dict[PartitionKey, PartitionPoint]:
    if format < 3:
        times = b.setdefault(_ROW_TIMES, {})
        return {(key := PartitionKey(t, p)): _partition(v, key, times) for t, p, v in b["partitions"]}
    return _partition_rows(b, iter(b["partitions"]))


def _partition_rows(b: dict[str, Any], rows: Iterator[list[Any]]) -> dict[PartitionKey, PartitionPoint]:
    names = b["partition_fields"]
    times = b.setdefault(_ROW_TIMES, {}) if "observed_at" in names else None  # format 4 and before
    out = {}
    for t, p, *v in rows:
        key = PartitionKey(_name(t), p)
        out[key] = _partition(dict(zip(names, v, strict=True)), key, times)
    return out


def _range_rows(_: dict[str, Any], rows: Iterator[list[Any]]) -> dict[PartitionKey, RangeHistory]:
    return {PartitionKey(_name(t), p): RangeHistory.decoded(v) for t, p, *v in rows}


def _history_rows(_: dict[str, Any], rows: Iterator[list[Any]]) -> dict[CommitKey, OffsetHistory]:
    return {CommitKey(_name(g), _name(t), p): OffsetHistory.decoded(v) for g, t, p, *v in rows}


# where a body of format 4 or before leaves its partitions' observation times (each row carried its own)
_ROW_TIMES = " row times"


def _partition(
    d: dict[str, Any], key: PartitionKey, times: dict[PartitionKey, float] | None
) -> PartitionPoint:
    if times is not None:
        times[key] = d.pop("observed_at")
    isr = d.pop("isr")
    return PartitionPoint(**d, isr=tuple(isr) if isr is not None else None)


def _name(value: Any) -> Any:
    """A group or topic name interned (one copy however many keys hold it, as the collectors do); a
    value that is not a string is left for the key's readers to refuse."""
    return sys.intern(value) if type(value) is str else value


Builder = Callable[[dict[str, Any], Iterator[list[Any]]], dict[Any, Any]]
# a large section's builder, and the member of the small part it reads (None: none)
_BUILDERS: dict[str, tuple[str | None, Builder]] = {
    "partitions": ("partition_fields", _partition_rows),
    "ranges": (None, _range_rows),
    "commits": ("commit_fields", _commit_rows),
    "commit_history": (None, _history_rows),
}


def _group(d: dict[str, Any]) -> GroupPoint:
    topics = _tuple(d.pop("topics", None))  # absent in states saved before it
    return GroupPoint(**d, topics=topics)


def _tuple(items: list[str] | None) -> tuple[str, ...] | None:
    return tuple(items) if items is not None else None
