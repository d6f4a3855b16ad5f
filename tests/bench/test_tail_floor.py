import pytest

from bench.tail_floor import _ratio, _since, figures


def test_figures_per_minute_per_second_and_per_record() -> None:
    got = figures("decode", 0.25, {"records": 150_000, "seconds": 60.0, "cpu_s": 0.93, "decode_errors": 0})
    assert got["mode"] == "decode" and got["pacing_s"] == 0.25 and got["decode_errors"] == 0
    assert got["records_per_s"] == 2500
    assert got["cpu_s_per_min"] == 0.93
    assert got["cpu_us_per_record"] == pytest.approx(6.2)


def test_figures_of_a_probe_that_read_nothing_have_no_cost_per_record() -> None:
    got = figures("read", 1.0, {"records": 0, "seconds": 30.0, "cpu_s": 0.2})
    assert got["cpu_s_per_min"] == 0.4 and got["records_per_s"] == 0
    assert got["cpu_us_per_record"] is None


def test_ratio_against_the_peer_and_none_without_its_figure() -> None:
    assert _ratio(0.93, {"cpu_s_per_min": 0.62}) == 1.5
    assert _ratio(0.93, {"cpu_s_per_min": 0.0}) is None
    assert _ratio(None, {"cpu_s_per_min": 0.62}) is None
    assert _ratio(0.93, {}) is None


def test_since_counts_only_the_phase_and_keeps_the_settings() -> None:
    before = {"partitions_per_tick": 5000, "tick_s": 5.0, "ticks": 78, "commits": 975_000, "late_ticks": 5}
    now = {"partitions_per_tick": 5000, "tick_s": 5.0, "ticks": 107, "commits": 1_337_500, "late_ticks": 6}
    assert _since(before, now) == {
        "partitions_per_tick": 5000,
        "tick_s": 5.0,
        "ticks": 29,
        "commits": 362_500,
        "late_ticks": 1,
    }
    assert _since({}, now) == now
