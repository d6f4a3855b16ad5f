"""A Table rewrites only the lines of changed values, and its text is what a fresh write gives."""

from __future__ import annotations

import math
import random

from prometheus_client.exposition import generate_latest
from prometheus_client.utils import floatToGoString

from service.metrics.fast import FastGauge, encode, escape_label, go_string
from service.metrics.memo import LineGauge, Table

HEAD = "offsetguard_x"


def _block(key: tuple[str, int]) -> str:
    return f'{{partition="{key[1]}",topic="{escape_label(key[0])}"}}'


class _Counted:
    """A block writer counting the rows whose label block it wrote."""

    def __init__(self) -> None:
        self.written: list[tuple[str, int]] = []

    def __call__(self, key: tuple[str, int]) -> str:
        self.written.append(key)
        return _block(key)


def _text(table: Table, keys: list[tuple[str, int]], values: list[float | None]) -> bytes:
    """The text of ``table``'s family after a render of these rows (new objects: nothing the same)."""
    table.rows((object(),), lambda: keys, _block)
    return table.column(HEAD, (object(),), lambda: values).text


def test_table_changed_values_rewritten_others_kept_same_text_as_fresh() -> None:
    keys = [("t", p) for p in range(100)]
    values: list[float | None] = [float(p * 1000) if p % 7 else None for p in range(100)]
    table = Table()
    _text(table, keys, values)
    moved = list(values)
    moved[3], moved[7], moved[50], moved[99] = 5e6, 12.0, None, 0.25  # longer, new series, gone, shorter
    counted = _Counted()
    table.rows((object(),), lambda: list(keys), counted)
    text = table.column(HEAD, (object(),), lambda: moved).text
    assert text == _text(Table(), keys, moved)
    assert counted.written == [("t", 7)]  # only the new series needed its labels written


def test_table_values_of_the_same_width_rewritten_in_place_same_text_as_fresh() -> None:
    keys = [("t", p) for p in range(50)]
    values: list[float | None] = [1000 + p for p in range(50)]
    table = Table()
    first = id(_text(table, keys, values))  # not held: the table alone holds the text
    moved = list(values)
    moved[0], moved[17], moved[49] = 2000, 1999, 1234  # the same width: nothing moves
    text = _text(table, list(keys), moved)
    assert id(text) == first  # the very text (a copy would be made while the old one is alive)
    assert text == _text(Table(), keys, moved)
    moved[17], moved[18] = 5, 123456  # shorter and longer: copied once, the in-place lines kept
    moved[30] = 3000
    assert _text(table, list(keys), moved) == _text(Table(), keys, moved)


def test_table_text_held_elsewhere_never_rewritten_in_place() -> None:
    keys = [("t", p) for p in range(20)]
    values: list[float | None] = [1000 + p for p in range(20)]
    table = Table()
    held = _text(table, keys, values)  # as a body being joined from the kept text holds it
    before = bytes(held)
    moved = [v + 1 if p % 3 else v for p, v in enumerate(values)]  # type: ignore[operator]
    text = _text(table, list(keys), moved)
    assert held == before
    assert text == _text(Table(), keys, moved) and text is not held


def test_table_same_values_same_text_object() -> None:
    keys = [("t", p) for p in range(10)]
    table = Table()
    first = _text(table, keys, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    assert _text(table, list(keys), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) is first


def test_table_same_source_objects_values_not_asked() -> None:
    keys = [("t", 0)]
    table, origin, source = Table(), object(), (object(),)
    table.rows((origin,), lambda: keys, _block)
    first = table.column(HEAD, source, lambda: [1])
    table.rows((origin,), lambda: keys, _block)

    def asked() -> list[float | None]:
        raise AssertionError("values asked for although the source is the same")

    assert table.column(HEAD, source, asked) is first


def test_table_rows_added_removed_reordered_same_text_as_fresh() -> None:
    table = Table()
    keys = [("a", 0), ("a", 1), ("b", 0), ('we"ird\\', 2)]
    _text(table, keys, [1, 2, 3, 4])
    for new_keys, values in (
        ([("a", 1), ("c", 0), ('we"ird\\', 2)], [2, 9, 5]),  # removed, added, changed
        ([("c", 0), ("a", 1)], [9, 2]),  # reordered
        ([], []),
        ([("d", 3)], [None]),
    ):
        assert _text(table, new_keys, values) == _text(Table(), new_keys, values)


def test_table_random_changes_always_same_text_as_fresh() -> None:
    rng = random.Random(47)
    table = Table()
    keys = [(f"topic-{rng.randrange(5)}-ü", p) for p in range(300)]
    values: list[float | None] = [rng.randrange(10**7) for _ in keys]
    for _ in range(30):
        for i in rng.sample(range(len(keys)), rng.randrange(40)):
            values[i] = rng.choice([None, 0, rng.randrange(10**9), rng.random() * 1e4, 2**62])
        if rng.random() < 0.3:
            keys = [*keys[:-1], (f"new-{rng.randrange(10**6)}", 0)]
        assert _text(table, list(keys), list(values)) == _text(Table(), keys, values)


def test_line_gauge_writes_and_lists_what_a_fast_gauge_does() -> None:
    keys = [("orders", 0), ('we"ird\\', 1), ("orders", 2)]
    values: list[float | None] = [12, None, 1234567.0]
    table = Table()
    table.rows((object(),), lambda: keys, lambda k: f'{{cluster="c1",{_block(k)[1:]}')
    lines = LineGauge(HEAD, "Help.", labels=["cluster", "topic", "partition"])
    lines.add_column(table.column(HEAD, (object(),), lambda: values))
    fast = FastGauge(HEAD, "Help.", labels=["cluster", "topic", "partition"])
    for (topic, partition), value in zip(keys, values, strict=True):
        if value is not None:
            fast.add_metric(["c1", topic, str(partition)], value)

    class One:
        def __init__(self, family: FastGauge | LineGauge) -> None:
            self.family = family

        def collect(self) -> list[FastGauge | LineGauge]:
            return [self.family]

    assert encode(One(lines), generate_latest, openmetrics=False) == encode(
        One(fast), generate_latest, openmetrics=False
    )
    assert lines.samples == fast.samples
    assert len(lines) == len(fast) == 2


def test_go_string_of_a_float_is_floattogostring_of_it() -> None:
    rng = random.Random(47)
    edge = [0.0, -0.0, 1e-5, 999999.9999, 1e6, -1e7, math.inf, -math.inf, math.nan, 5e-324, 0.1 + 0.2]
    spread = [math.ldexp(rng.random(), rng.randint(-60, 60)) * rng.choice([1, -1]) for _ in range(20_000)]
    for value in edge + spread + [rng.expovariate(1e-3) for _ in range(20_000)]:
        assert go_string(value) == floatToGoString(value), value


def test_table_second_family_takes_blocks_from_the_first_same_text_as_alone() -> None:
    keys = [('tö"pic', p) for p in range(7)] + [("b\\ü\n", 0)]
    first: list[float | None] = [None, 1, 2, None, 4, 5, 6, 7]  # a row without a line: blocks written
    second: list[float | None] = [0.5, None, 2, 3, 4e6, -5, 6, 7]
    counted = _Counted()
    table = Table()
    table.rows((object(),), lambda: keys, counted)
    table.column("offsetguard_a", (object(),), lambda: first)
    both = table.column(HEAD, (object(),), lambda: second).text
    alone = Table()
    alone.rows((object(),), lambda: keys, _block)
    assert both == alone.column(HEAD, (object(),), lambda: second).text
    # the first family wrote every row it has a line for; the second only the row the first lacked
    assert counted.written == [k for k, v in zip(keys, first, strict=True) if v is not None] + [
        keys[0],
        keys[3],
    ]
