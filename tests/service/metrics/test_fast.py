"""FastGauge and encode() write exactly what prometheus_client writes, in both formats, much faster."""

import random

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.openmetrics.exposition import generate_latest as openmetrics_latest
from prometheus_client.utils import floatToGoString

from service.metrics.fast import BlockGauge, FastGauge, encode, escape_label, go_string

LABELS = ["cluster", "group", "topic", "partition"]  # not sorted: the exposition sorts them
ROWS = [
    (["prod", "billing", "orders", "0"], 12),
    (["prod", 'we"ird\\group\nname', "orders", "1"], -3),
    (["prod", "billing", "orders.v2", "10"], 1234567.0),
    (["prod", "billing", "orders", "2"], 0.25),
    (["prod", "billing", "ünïcode", "3"], float("inf")),
    (["prod", "billing", "orders", "4"], 1e21),
]


class Registry:
    def __init__(self, fast: bool) -> None:
        self.fast = fast

    def collect(self) -> list[Metric]:
        kind = FastGauge if self.fast else GaugeMetricFamily
        lag = kind("offsetguard_group_lag_messages", 'Lag "in" messages\\n.', labels=LABELS)
        none = kind("offsetguard_empty", "No series at all.", labels=["cluster"])
        for labels, value in ROWS:
            lag.add_metric(labels, value)
        total = CounterMetricFamily("offsetguard_things", "Things.", labels=["cluster"])
        total.add_metric(["prod"], 3)
        bare = kind("offsetguard_up", "No labels.", labels=[])
        bare.add_metric([], 1)
        return [total, lag, none, bare, total]


def test_encode_writes_what_prometheus_client_writes_in_text_format() -> None:
    expected = generate_latest(Registry(fast=False))
    assert encode(Registry(fast=True), generate_latest, openmetrics=False) == expected


def test_encode_writes_what_prometheus_client_writes_in_openmetrics() -> None:
    expected = openmetrics_latest(Registry(fast=False))
    assert encode(Registry(fast=True), openmetrics_latest, openmetrics=True) == expected
    assert expected.count(b"# EOF") == 1


def test_fast_gauge_still_lists_its_samples() -> None:
    [slow, fast] = (Registry(fast=f).collect()[1] for f in (False, True))
    assert fast.samples == slow.samples
    assert len(fast) == len(ROWS)


def test_render_negotiates_openmetrics_and_writes_it_like_prometheus_client() -> None:
    from prometheus_client.exposition import choose_encoder

    encoder, content_type = choose_encoder("application/openmetrics-text; version=1.0.0")
    assert content_type.startswith("application/openmetrics-text")
    assert encode(Registry(fast=True), encoder, openmetrics=True) == encoder(Registry(fast=False))


def test_go_string_of_an_int_is_floattogostring_of_it() -> None:
    edges = [0, 1, -1, 999_999, 1_000_000, 1_000_001, 1_234_560, 10_000_000, 99_999_990, 10**15 - 1]
    edges += [-(10**15) + 1, -1_000_000, 2**53, 10**16, 10**17 + 5, -(10**16), 120_000_000_000]
    rng = random.Random(7)
    ints = edges + [rng.randrange(-(10**16), 10**17) for _ in range(20_000)]
    ints += [rng.randrange(0, 10**k) for k in range(1, 17) for _ in range(200)]
    for value in ints:
        assert go_string(value) == floatToGoString(value), value
    for value in [0.25, 1e21, float("inf"), float("-inf"), 1234567.0, -0.0, True]:
        assert go_string(value) == floatToGoString(value), value


def test_encode_hands_the_same_body_to_a_sink_in_pieces() -> None:
    many = FastGauge("offsetguard_many", "Many.", labels=["cluster", "n"])
    for n in range(50_000):
        many.add_metric(["prod", str(n)], n * 7)

    class Many:
        def collect(self) -> list[Metric]:
            return [*Registry(fast=True).collect(), many]

    pieces: list[bytes] = []
    assert encode(Many(), openmetrics_latest, openmetrics=True, sink=pieces.append) == b""
    assert len(pieces) > 3  # the 50,000 lines came in chunks
    assert b"".join(pieces) == encode(Many(), openmetrics_latest, openmetrics=True)


class SharedLabels:
    """Families that carry the same label values under other names, in another order, or both (the
    encode's label-block cache must key on the names as well as the values)."""

    def __init__(self, fast: bool) -> None:
        self.fast = fast

    def collect(self) -> list[Metric]:
        kind = FastGauge if self.fast else GaugeMetricFamily
        shared = [tuple(labels) for labels, _ in ROWS]
        families = [
            kind("a_lag", "A.", labels=LABELS),
            kind("a_committed", "A again.", labels=LABELS),
            kind(
                "b_reordered", "Same names, another order.", labels=["topic", "group", "cluster", "partition"]
            ),
            kind("c_renamed", "Other names.", labels=["w", "x", "y", "z"]),
        ]
        for n, family in enumerate(families):
            for labels, (_, value) in zip(shared, ROWS, strict=True):
                if self.fast and n % 2 == 0:
                    family.appender()((labels, value))  # type: ignore[attr-defined]
                else:
                    family.add_metric(list(labels), value)
        return list(families)


def test_families_sharing_label_values_write_each_its_own_labels() -> None:
    for encoder, om in ((generate_latest, False), (openmetrics_latest, True)):
        assert encode(SharedLabels(fast=True), encoder, openmetrics=om) == encoder(SharedLabels(fast=False))


class Blocks:
    """ROWS through a BlockGauge, each series by its written label block or by ``add_metric``."""

    def collect(self) -> list[Metric]:
        lag = BlockGauge("offsetguard_group_lag_messages", 'Lag "in" messages\\n.', labels=LABELS)
        none = BlockGauge("offsetguard_empty", "No series at all.", labels=["cluster"])
        add = lag.appender()
        for n, (labels, value) in enumerate(ROWS):
            if n % 2:
                add((lag.block(labels), value))
            else:
                lag.add_metric(labels, value)
        bare = BlockGauge("offsetguard_up", "No labels.", labels=[])
        bare.add_metric([], 1)
        return [lag, none, bare]


class Plain:
    def collect(self) -> list[Metric]:
        lag = GaugeMetricFamily("offsetguard_group_lag_messages", 'Lag "in" messages\\n.', labels=LABELS)
        for labels, value in ROWS:
            lag.add_metric(labels, value)
        bare = GaugeMetricFamily("offsetguard_up", "No labels.", labels=[])
        bare.add_metric([], 1)
        return [lag, GaugeMetricFamily("offsetguard_empty", "No series at all.", labels=["cluster"]), bare]


def test_block_gauge_writes_what_prometheus_client_writes() -> None:
    for encoder, om in ((generate_latest, False), (openmetrics_latest, True)):
        assert encode(Blocks(), encoder, openmetrics=om) == encoder(Plain())


def test_block_gauge_lists_its_samples_with_labels_unescaped() -> None:
    [lag, none, bare] = Blocks().collect()
    assert lag.samples == Plain().collect()[0].samples  # quote, backslash and newline read back
    assert none.samples == [] and bare.samples == Plain().collect()[2].samples
    assert len(lag) == len(ROWS)
    assert escape_label('a"b\\c\nd') == 'a\\"b\\\\c\\nd'
