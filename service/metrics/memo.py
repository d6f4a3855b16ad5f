"""Sample lines kept from one render to the next: a series whose value did not change is not written again.

Most of a ``/metrics`` body is the same from scrape to scrape: idle partitions keep their log range,
caught-up groups their commit. A :class:`Table` keeps, for one cluster's rows of one kind (its committed
group-partitions, its partitions), the row keys and, per family, the value each row's series was
written from and the line written (``""`` and ``None`` where a row has no series in that family), all
aligned with the keys. The next render hands in its rows' values: a row whose key and value are those of
the previous render gets the very line string written then, and only the others are formatted (their
label block once for all of the row's families). A family whose inputs are the very objects of the
previous render gets its whole list of lines back without looking at a value.

Values are compared with ``==``: equal values format alike (the exposition writes ``float(value)``);
callers hand in ints and floats that are never ``-0.0`` (which equals ``0.0`` but is written ``-0.0``).
The lines are a :class:`LineGauge`'s, which :func:`service.metrics.fast.encode` writes as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from prometheus_client.samples import Sample

from service.metrics.fast import BulkGauge, LineCache, go_string, unblock

Value = float | None  # None: this row has no series in this family
Key = Any  # a row's key: hashable, equal for the same series from render to render
_CHUNK = 20_000  # lines joined (and encoded) at a time


class LineGauge(BulkGauge):
    """A bulk gauge taking its series as lines already written (``name{labels} value\\n``), one list
    per cluster, with the values they were written from (``None`` beside an empty line: no series)."""

    def __init__(self, name: str, documentation: str, labels: Sequence[str]) -> None:
        self._parts: list[tuple[list[str], list[Value]]] = []
        super().__init__(name, documentation, labels=labels)

    def add_lines(self, lines: list[str], values: list[Value]) -> None:
        self._parts.append((lines, values))

    def __len__(self) -> int:
        return sum(len(values) - values.count(None) for _, values in self._parts)

    def _samples(self) -> Iterator[Sample]:
        names = sorted(self._labelnames)
        start = len(self.name)
        for lines, values in self._parts:
            for line, value in zip(lines, values, strict=True):
                if value is not None:
                    yield Sample(self.name, unblock(names, line[start : line.rindex(" ")]), value, None)

    def lines(self, cache: LineCache) -> Iterator[str]:
        for lines, _ in self._parts:
            yield from filter(None, lines)

    def chunks(self, cache: LineCache) -> Iterator[str]:
        for lines, _ in self._parts:
            for i in range(0, len(lines), _CHUNK):
                if chunk := "".join(lines[i : i + _CHUNK]):
                    yield chunk


class _Column:
    __slots__ = ("lines", "source", "values")

    def __init__(self, source: tuple[object, ...], values: list[Value], lines: list[str]) -> None:
        self.source = source
        self.values = values
        self.lines = lines


class Table:
    """One cluster's rows of one kind as the previous render wrote them (see the module docstring).

    A render calls :meth:`rows` once, then :meth:`lines` for each family over those rows; a family not
    written in a render is forgotten."""

    __slots__ = ("_at", "_block", "_blocks", "_columns", "_keys", "_old", "_origin")

    def __init__(self) -> None:
        self._origin: tuple[object, ...] = ()
        self._keys: list[Key] = []
        self._columns: dict[str, _Column] = {}
        self._old: dict[str, _Column] = {}
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
        if not _same(origin, self._origin):
            new = keys()
            if new == self._keys:  # other objects, same rows (a collector cycle): lines still aligned
                self._at = None
            else:
                where = {k: i for i, k in enumerate(self._keys)}
                self._at = [where.get(k, -1) for k in new]
            self._origin, self._keys = origin, new
        else:
            self._at = None
        return self._keys

    def lines(self, head: str, source: tuple[object, ...], values: Callable[[], list[Value]]) -> _Column:
        """Family ``head``'s lines over this render's rows, from ``values()`` (one per row, aligned with
        the keys), unless ``source`` holds the very objects its previous values came from."""
        old = self._old.get(head)
        if old is not None and self._at is None and _same(source, old.source):
            self._columns[head] = old
            return old
        new = values()
        if old is None:
            lines = [self._line(head, i, v) for i, v in enumerate(new)]
        elif self._at is None:
            if new == old.values:
                lines = old.lines
            else:
                lines = old.lines.copy()
                for i, (v, was) in enumerate(zip(new, old.values, strict=True)):
                    if v != was:
                        line = lines[i]
                        if v is None or not line:
                            lines[i] = self._line(head, i, v)
                        else:  # the same series, another value: its line up to the value stays
                            lines[i] = f"{line[: line.rindex(' ') + 1]}{go_string(v)}\n"
        else:
            lines = self._realigned(head, new, old)
        column = self._columns[head] = _Column(source, new, lines)
        return column

    def _realigned(self, head: str, new: list[Value], old: _Column) -> list[str]:
        was_values, was_lines, line = old.values, old.lines, self._line
        lines = []
        for i, (v, at) in enumerate(zip(new, self._at or (), strict=True)):
            lines.append(was_lines[at] if at >= 0 and was_values[at] == v else line(head, i, v))
        return lines

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

    def keep(self, clusters: set[str], kinds: set[str] | None = None) -> None:
        """Forget the tables of other clusters (and, if given, of other kinds)."""
        gone = [k for k in self._tables if k[0] not in clusters or (kinds is not None and k[1] not in kinds)]
        for key in gone:
            del self._tables[key]


def _same(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    """The very same objects, in order (observations are frozen and replaced whole: identity is their
    version)."""
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
