"""Sample lines kept from one render to the next: a series whose value did not change is not written again.

Most of a ``/metrics`` body is the same from scrape to scrape: idle partitions keep their log range,
caught-up groups their commit. A :class:`Table` keeps, for one cluster's rows of one kind (its committed
group-partitions, its partitions), the row keys and, per family, the values its lines were written from
and the lines as the body has them: one ``bytes`` per family, with each row's line length (an absent
series is an empty line). The next render hands in its rows' values: the text of the rows whose key and
value are the previous render's is reused as it is, and only the other rows are written (a changed
value after the very label block written before; a new row's label block once for all its families).
A family whose values are all the same is reused whole, and so is one whose inputs are the very objects
of the previous render, without looking at a value. The kept text is the body's own bytes, so the body
is not held twice; a changed line of the same length is rewritten in place (the text is copied only
when a line changes length), so a render that moved a few values allocates no second copy either. The
encode writes the kept text out before the next render can rewrite it (the collector serves its memo
to one render at a time).

Values are compared with ``==``: equal values are written alike (the exposition writes
``float(value)``); callers hand in ints and floats that are never ``-0.0`` (equal to ``0.0``, written
``-0.0``). Values all ints are kept as a machine array (8 bytes each, no object per value).
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Iterator, Sequence
from itertools import accumulate
from typing import Any

from prometheus_client.samples import Sample

from service.metrics.fast import BulkGauge, LineCache, escape_label, go_string, unblock

Value = float | None  # None: this row has no series in this family
Values = Sequence[Value]  # a list, or an array("q") when every value is an int
Key = Any  # a row's key: hashable, equal for the same series from render to render
_CHUNK = 10_000  # lines written at a time by a render from scratch
_BLOCK = 32  # values compared at a time
# references to a kept text and its column while only the table holds them, as Table._patched counts
# them (the column's slot or the caller's local, the local, getrefcount's argument)
_TEXT_REFS = 3
_COLUMN_REFS = 3


class Escaped(dict[str, str]):
    """Each label value escaped once per render (call it with the value)."""

    def __call__(self, value: str) -> str:
        e = self.get(value)
        if e is None:
            e = self[value] = escape_label(value)
        return e


class Column:
    """One family's lines over a table's rows: ``text``, and each row's line length in it."""

    __slots__ = ("lengths", "source", "text", "values")

    def __init__(
        self, source: tuple[object, ...], values: Values, text: bytearray, lengths: array[int]
    ) -> None:
        self.source = source
        self.values = values
        self.text = text
        self.lengths = lengths

    def lines(self) -> Iterator[bytearray]:
        """Each row's line (empty: no series)."""
        text, start = self.text, 0
        for end in accumulate(self.lengths):
            yield text[start:end]
            start = end


class LineGauge(BulkGauge):
    """A bulk gauge taking its series as a :class:`Column` per cluster (the body's bytes as they are)."""

    def __init__(self, name: str, documentation: str, labels: Sequence[str]) -> None:
        self._columns: list[Column] = []
        super().__init__(name, documentation, labels=labels)

    def add_column(self, column: Column) -> None:
        self._columns.append(column)

    def __len__(self) -> int:
        return sum(len(c.lengths) - c.lengths.count(0) for c in self._columns)

    def _samples(self) -> Iterator[Sample]:
        names = sorted(self._labelnames)
        start = len(self.name)
        for c in self._columns:
            for raw, value in zip(c.lines(), c.values, strict=True):
                if line := raw.decode():
                    block = unblock(names, line[start : line.rindex(" ")])
                    yield Sample(self.name, block, value, None)  # type: ignore[arg-type]

    def lines(self, cache: LineCache) -> Iterator[str]:
        for c in self._columns:
            yield from (line.decode() for line in c.lines() if line)

    def chunks(self, cache: LineCache) -> Iterator[bytes | bytearray]:
        # the kept text itself, no copy: written out before the next render may rewrite it in place
        return (c.text for c in self._columns if c.text)


class Table:
    """One cluster's rows of one kind as the previous render wrote them (see the module docstring).

    A render calls :meth:`rows` once, then :meth:`column` for each family over those rows, then
    :meth:`done`; a family not written in a render is forgotten."""

    __slots__ = ("_at", "_block", "_blocks", "_columns", "_keys", "_old", "_origin")

    def __init__(self) -> None:
        self._origin: tuple[object, ...] = ()
        self._keys: list[Key] = []
        self._columns: dict[str, Column] = {}
        self._old: dict[str, Column] = {}
        self._at: list[int] | None = None  # new row -> its previous index; None: rows unchanged
        self._blocks: dict[int, str] = {}
        self._block: Callable[[Key], str] = str

    def rows(
        self, origin: tuple[object, ...], keys: Callable[[], list[Key]], block: Callable[[Key], str]
    ) -> list[Key]:
        """This render's row keys: the previous ones if ``origin`` holds the very objects they came from,
        else ``keys()``; ``block(key)`` writes a row's label block."""
        self._old, self._columns = self._columns, {}
        self._blocks, self._block = {}, block
        self._at = None
        if not _same(origin, self._origin):
            new = keys()
            if new != self._keys:
                where = {k: i for i, k in enumerate(self._keys)}
                self._at = [where.get(k, -1) for k in new]
            # the new keys even when equal: the previous ones (and what they came from) are let go
            self._origin, self._keys = origin, new
        return self._keys

    def column(self, head: str, source: tuple[object, ...], values: Callable[[], Values]) -> Column:
        """Family ``head``'s lines over this render's rows, from ``values()`` (one per row, aligned with
        the keys), unless ``source`` holds the very objects its previous values came from."""
        old = self._old.pop(head, None)  # popped: a render holds one generation of lines, not two
        if old is not None and self._at is None and _same(source, old.source):
            self._columns[head] = old
            return old
        new = _packed(values())
        if old is None:
            column = self._written(head, source, new)
        elif self._at is None:
            if new == old.values:
                column = Column(source, old.values, old.text, old.lengths)
            else:
                column = self._patched(head, source, new, old)
        else:
            column = self._realigned(head, source, new, old)
        self._columns[head] = column
        return column

    def done(self) -> None:
        """The render's families are written: let go of what only it needed (label blocks, the previous
        lines of families it did not write)."""
        self._old, self._blocks, self._block = {}, {}, str

    def _written(self, head: str, source: tuple[object, ...], new: Values) -> Column:
        """Every line written anew: each row's label block taken from a family already written over this
        render's rows (its text holds them, encoded), else written (and not kept: a render from scratch
        holds no block per row beside the text)."""
        donor = next(((h, c) for h, c in self._columns.items() if len(c.lengths) == len(new)), None)
        out = bytearray()  # grown in place: never a second copy of the text
        lengths = array("I")
        if donor is None:
            keys, block = self._keys, self._block
            for at in range(0, len(new), _CHUNK):  # a chunk's str lines at a time beside the text
                lines = [
                    "" if (v := new[i]) is None else f"{head}{block(keys[i])} {go_string(v)}\n"
                    for i in range(at, min(at + _CHUNK, len(new)))
                ]
                chunk = "".join(lines)
                if chunk.isascii():
                    lengths.extend(map(len, lines))
                    out += chunk.encode()
                else:
                    encoded = [line.encode() for line in lines]
                    lengths.extend(map(len, encoded))
                    out += b"".join(encoded)
            return Column(source, new, out, lengths)
        skip, text, sizes = len(donor[0]), donor[1].text, donor[1].lengths
        name, pos = head.encode(), 0
        for at in range(0, len(new), _CHUNK):
            encoded = []
            for i in range(at, min(at + _CHUNK, len(new))):
                start, pos = pos, pos + sizes[i]
                if (v := new[i]) is None:
                    encoded.append(b"")
                    continue
                if start < pos:  # the donor's line: its name, the block, a space, its value
                    labels: bytes | bytearray = text[start + skip : text.rindex(b" ", start, pos)]
                else:
                    labels = self._block(self._keys[i]).encode()
                encoded.append(b"%s%s %s\n" % (name, labels, go_string(v).encode()))
            lengths.extend(map(len, encoded))
            out += b"".join(encoded)
        return Column(source, new, out, lengths)

    def _patched(self, head: str, source: tuple[object, ...], new: Values, old: Column) -> Column:
        """The same rows: the lines of changed values rewritten, in place while each keeps its length (no
        copy of the family's text while only values of the same width changed: an offset moving on by a
        few). From the first line that changes length on, the text is copied once into a new buffer, the
        changed lines put in (no object per kept run)."""
        text, lengths = old.text, old.lengths
        # in place only while nothing but this table holds the text: not a body still being joined from
        # it, nor a family of an earlier render someone kept (else copied, as for a line of another width)
        alone = sys.getrefcount(text) <= _TEXT_REFS and sys.getrefcount(old) <= _COLUMN_REFS
        out: bytearray | None = None if alone else bytearray()  # the new text: written up to ``pos``
        view = memoryview(text)
        pos = at = 0  # the offset of row ``at`` in the text
        for i in _changed(new, old.values):
            gap = i - at  # rows kept since the previous change (often none or one: lag seconds)
            start = pos if not gap else pos + lengths[at] if gap == 1 else pos + sum(lengths[at:i])
            end = start + lengths[i]
            value = new[i]
            if value is None or start == end:  # a series gone or new: the whole line
                cut, written = start, self._line(head, i, value).encode()
            else:  # the same series, another value: its line up to the value stays
                cut = text.rindex(b" ", start, end) + 1
                written = b"%s\n" % go_string(value).encode()
            if out is None:
                if len(written) == end - cut:
                    text[cut:end] = written
                    pos, at = end, i + 1
                    continue
                out, lengths = bytearray(view[:start]), array("I", lengths)  # with the lines rewritten
                out += view[start:cut]
            else:
                if lengths is old.lengths:
                    lengths = array("I", lengths)
                out += view[pos:cut]
            out += written
            lengths[i] = cut - start + len(written)
            pos, at = end, i + 1
        if out is None:
            view.release()
            return Column(source, new, text, lengths)
        out += view[pos:]
        view.release()
        return Column(source, new, out, lengths)

    def _realigned(self, head: str, source: tuple[object, ...], new: Values, old: Column) -> Column:
        """Rows added, removed or moved: each row's previous line if its value is the same."""
        was, lines = old.values, list(old.lines())
        out: list[bytes | bytearray] = []
        for i, (v, at) in enumerate(zip(new, self._at or (), strict=True)):
            out.append(lines[at] if at >= 0 and was[at] == v else self._line(head, i, v).encode())
        return Column(source, new, bytearray().join(out), array("I", map(len, out)))

    def _line(self, head: str, i: int, value: Value) -> str:
        if value is None:
            return ""
        block = self._blocks.get(i)
        if block is None:
            block = self._blocks[i] = self._block(self._keys[i])
        return f"{head}{block} {go_string(value)}\n"


class LineMemo:
    """The :class:`Table` of each (cluster, row kind), owned by one collector; clusters no longer
    scraped are dropped by :meth:`keep`."""

    def __init__(self) -> None:
        self._tables: dict[tuple[str, str], Table] = {}

    def table(self, cluster: str, kind: str) -> Table:
        table = self._tables.get((cluster, kind))
        if table is None:
            table = self._tables[(cluster, kind)] = Table()
        return table

    def keep(self, clusters: set[str]) -> None:
        """Forget the tables of other clusters."""
        for key in [k for k in self._tables if k[0] not in clusters]:
            del self._tables[key]


def _packed(values: Values) -> Values:
    """``values`` as an array of machine ints when they all are ints (no None, no float), else as given."""
    if isinstance(values, array):
        return values
    try:
        return array("q", values)  # type: ignore[type-var]
    except (TypeError, OverflowError):
        return values


def _changed(new: Values, was: Values) -> Iterator[int]:
    """The rows whose value differs (``new`` and ``was`` as long), in order. Arrays are compared a
    block at a time first (a memory comparison), rows one by one only in the blocks that differ."""
    if not (isinstance(new, array) and isinstance(was, array)):
        return (i for i, (v, w) in enumerate(zip(new, was, strict=True)) if v != w)
    return (
        i
        for at in range(0, len(new), _BLOCK)
        if new[at : at + _BLOCK] != was[at : at + _BLOCK]
        for i in range(at, min(at + _BLOCK, len(new)))
        if new[i] != was[i]
    )


def _same(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    """The very same objects, in order (observations are frozen and replaced whole: identity is their
    version)."""
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
