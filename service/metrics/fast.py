"""Bulk gauges written straight to the exposition, and the encoder that does it.

prometheus_client builds a ``Sample`` (with a label dict) per series and formats each one label by label,
escaping every value again: about 10 µs a series, seconds for the 200,000+ series of a 50,000
group-partition fleet. A :class:`FastGauge` keeps each series as ``(label values, value)`` and writes its
lines from one template per family, with each distinct label value escaped once. The bytes are those
prometheus_client writes (labels sorted by name, values by ``floatToGoString``); text 0.0.4 and
OpenMetrics 1.0 write gauge sample lines alike, only the headers differ, and those still come from
prometheus_client. A :class:`BlockGauge` takes each series with its label block already written, for a
caller that writes several families over the same rows. Every other family goes through
prometheus_client unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from typing import Any

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

Encoder = Callable[[Any], bytes]
EOF = b"# EOF\n"


class LineCache:
    """What one encode's families share: each label value's escaped form, and each label block
    (``{a="x",b="y"}``) by label names and values, so a row's labels are written once for every family
    that carries them (lag, lag seconds and committed offset of a group-partition; log start and end of
    a partition)."""

    __slots__ = ("blocks", "escaped")

    def __init__(self) -> None:
        self.escaped: dict[str, str] = {}
        self.blocks: dict[tuple[str, ...], dict[tuple[str, ...], str]] = {}


class BulkGauge(GaugeMetricFamily):
    """A :class:`GaugeMetricFamily` (same constructor and ``add_metric``) whose sample lines
    :func:`encode` writes in bulk (:meth:`lines`).

    ``samples`` still lists ``Sample`` objects for whoever reads a family directly (tests, other
    encoders); :func:`encode` never builds them.
    """

    def __init__(self, name: str, documentation: str, labels: Sequence[str]) -> None:
        super().__init__(name, documentation, labels=labels)
        order = sorted(range(len(self._labelnames)), key=lambda i: self._labelnames[i])
        self._order = tuple(order)
        pairs = ",".join(f'{self._labelnames[i]}="{{{n}}}"' for n, i in enumerate(order))
        self._block = f"{{{{{pairs}}}}}" if order else ""  # the label block, as a format template

    @property
    def samples(self) -> list[Sample]:
        return list(self._samples())

    @samples.setter
    def samples(self, value: list[Sample]) -> None:  # Metric.__init__ sets []; rows live elsewhere
        if value:
            raise ValueError(f"{type(self).__name__} takes series through add_metric")

    def _samples(self) -> Iterator[Sample]:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def lines(self, cache: LineCache) -> Iterator[str]:
        """The family's sample lines, with ``cache`` shared by the encode's families."""
        raise NotImplementedError

    def chunks(self, cache: LineCache) -> Iterator[bytes | bytearray]:
        """The family's sample lines, encoded a few thousand at a time (what :func:`encode` writes)."""
        lines = self.lines(cache)
        while chunk := "".join(islice(lines, _CHUNK)):
            yield chunk.encode()


class FastGauge(BulkGauge):
    """A bulk gauge keeping each series as ``(label values, value)``: its lines are written from one
    template per family, each distinct label value escaped once and each label block written once per
    encode (:class:`LineCache`)."""

    def __init__(self, name: str, documentation: str, labels: Sequence[str]) -> None:
        self._rows: list[tuple[tuple[str, ...], float]] = []
        super().__init__(name, documentation, labels=labels)

    def _samples(self) -> Iterator[Sample]:
        names = self._labelnames
        for v, x in self._rows:
            yield Sample(self.name, dict(zip(names, v, strict=True)), x, None)

    def add_metric(self, labels: Sequence[str], value: float, timestamp: Any = None) -> None:
        if timestamp is not None:
            raise ValueError("FastGauge series carry no timestamp")
        self._rows.append((tuple(labels), value))

    def appender(self) -> Callable[[tuple[tuple[str, ...], float]], None]:
        """``add_metric`` for a bulk caller: takes ``(labels, value)`` with no checks and no call overhead
        of its own (a hundred thousand series a scrape); ``labels`` a tuple."""
        return self._rows.append

    def __len__(self) -> int:
        return len(self._rows)

    def lines(self, cache: LineCache) -> Iterator[str]:
        escaped = cache.escaped
        blocks = cache.blocks.get(self._labelnames)
        if blocks is None:
            blocks = cache.blocks[self._labelnames] = {}
        block = self._block.format
        order = self._order
        head = self.name
        for values, value in self._rows:
            b = blocks.get(values)
            if b is None:
                out = []
                for i in order:
                    v = values[i]
                    e = escaped.get(v)
                    if e is None:
                        e = escaped[v] = escape_label(v)
                    out.append(e)
                b = blocks[values] = block(*out)
            yield f"{head}{b} {go_string(value)}\n"


class BlockGauge(BulkGauge):
    """A bulk gauge whose series arrive with their label block already written (``{a="x",b="y"}``: names
    sorted, values escaped by :func:`escape_label`). A caller writing several families over the same rows
    (lag, lag seconds and committed offset of each group-partition) formats each row's labels once for
    all of them, and nothing is looked up per line. Take series with :meth:`appender`; ``add_metric``
    still works (it writes the block)."""

    def __init__(self, name: str, documentation: str, labels: Sequence[str]) -> None:
        self._rows: list[tuple[str, float]] = []
        super().__init__(name, documentation, labels=labels)

    def block(self, labels: Sequence[str]) -> str:
        """The label block of ``labels`` (values in the order of the family's label names)."""
        return self._block.format(*(escape_label(labels[i]) for i in self._order))

    def add_metric(self, labels: Sequence[str], value: float, timestamp: Any = None) -> None:
        if timestamp is not None:
            raise ValueError("BlockGauge series carry no timestamp")
        self._rows.append((self.block(labels), value))

    def appender(self) -> Callable[[tuple[str, float]], None]:
        """Takes ``(label block, value)`` with no checks (the block as :meth:`block` writes it)."""
        return self._rows.append

    def __len__(self) -> int:
        return len(self._rows)

    def _samples(self) -> Iterator[Sample]:
        names = [self._labelnames[i] for i in self._order]
        for b, x in self._rows:
            yield Sample(self.name, unblock(names, b), x, None)

    def lines(self, cache: LineCache) -> Iterator[str]:
        head = self.name
        for block, value in self._rows:
            yield f"{head}{block} {go_string(value)}\n"


def escape_label(value: str) -> str:
    """A label value as the exposition writes it (backslash, newline and double quote escaped)."""
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def unblock(names: list[str], block: str) -> dict[str, str]:
    """The label values of a block written for ``names`` (sorted), unescaped (for :attr:`samples`)."""
    values = _VALUE.findall(block)
    if len(values) != len(names):
        raise ValueError(f"label block {block!r} does not hold {names}")
    return {n: _UNESCAPE.sub(lambda m: _UNESCAPED[m.group(1)], v) for n, v in zip(names, values, strict=True)}


_VALUE = re.compile(r'="((?:[^"\\]|\\.)*)"')
_UNESCAPE = re.compile(r"\\(.)")
_UNESCAPED = {"\\": "\\", "n": "\n", '"': '"'}


def go_string(value: float) -> str:
    """``floatToGoString(value)``, without the float round trip for an integer (offsets, lags, counts: most
    series): an int below 10**15 is exact as a float, whose ``repr`` is its digits and ``.0``; from 10**6
    up Go (and prometheus_client) write it with an exponent. A finite float below 10**6 (lag in seconds)
    is its ``repr``, as floatToGoString writes it."""
    if type(value) is int and -_EXACT < value < _EXACT:
        if value < 1_000_000:
            return f"{value}.0"
        digits = str(value)
        return f"{(digits[0] + '.' + digits[1:] + '0').rstrip('0.')}e+{len(digits) - 1:02d}"
    if type(value) is float and _MINUS_INF < value < 1_000_000.0:  # NaN compares false
        return repr(value)
    return floatToGoString(value)


_EXACT = 10**15  # integers this small are exact as floats (2**53 ~ 9e15)
_MINUS_INF = float("-inf")
_CHUNK = 20_000  # sample lines encoded (and handed to the sink) at a time


class _One:
    """A registry-like holder of families, for prometheus_client's encoders."""

    def __init__(self, metrics: Iterable[Metric]) -> None:
        self._metrics = list(metrics)

    def collect(self) -> list[Metric]:
        return self._metrics


def encode(
    registry: Any,
    encoder: Encoder,
    *,
    openmetrics: bool,
    sink: Callable[[bytes | bytearray], None] | None = None,
) -> bytes:
    """What ``encoder`` (a prometheus_client ``generate_latest``, ``openmetrics`` or not) writes for
    ``registry``, with every :class:`BulkGauge` written in bulk. Runs of ordinary families are encoded
    together by ``encoder``. With a ``sink``, the body goes to it piece by piece as it is written (a
    compressor: the whole text is never held) and ``b""`` is returned."""
    out: list[bytes | bytearray] = []
    emit = out.append if sink is None else sink
    cache = LineCache()
    pending: list[Metric] = []

    def flush() -> None:
        if pending:
            body = encoder(_One(pending))
            emit(body.removesuffix(EOF) if openmetrics else body)
            pending.clear()

    for metric in registry.collect():
        if not isinstance(metric, BulkGauge):
            pending.append(metric)
            continue
        flush()
        header = encoder(_One([GaugeMetricFamily(metric.name, metric.documentation, labels=())]))
        emit(header.removesuffix(EOF) if openmetrics else header)
        for chunk in metric.chunks(cache):
            emit(chunk)
    flush()
    if openmetrics:
        emit(EOF)
    return b"".join(out)
