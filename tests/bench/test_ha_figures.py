"""bench/ha's figures: nearest-rank percentiles, the role from a /readyz answer, the leader gauges from the
service's own exposition, rates over a window."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import Metric

from bench.ha_figures import leader_gauges, nearest_rank, per_second, result_line, role_of, summarise
from service.metrics.leader import leader_families


def test_nearest_rank_ten_values_p50_is_the_fifth_and_p99_the_largest() -> None:
    values = [9.0, 1.0, 8.0, 2.0, 7.0, 3.0, 6.0, 4.0, 5.0, 10.0]
    assert nearest_rank(values, 0.50) == 5.0
    assert nearest_rank(values, 0.99) == 10.0
    assert nearest_rank(values, 0.10) == 1.0


def test_nearest_rank_two_hundred_values_p99_is_below_the_max() -> None:
    values = [float(i) for i in range(1, 201)]
    assert nearest_rank(values, 0.99) == 198.0
    assert nearest_rank(values, 0.50) == 100.0


def test_nearest_rank_no_values_refused() -> None:
    with pytest.raises(ValueError, match="no values"):
        nearest_rank([], 0.5)


def test_summarise_failovers_rounded_with_min_and_max() -> None:
    assert summarise([10.04, 8.51, 11.96, 9.0]) == {
        "n": 4, "p50_s": 9.0, "p99_s": 11.96, "max_s": 11.96, "min_s": 8.51,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("status", "body", "role"),
    [
        (200, {"ready": True, "leader": {"role": "standby", "replica": "b"}}, "standby"),
        (503, {"ready": False, "leader": {"role": "active", "replica": "a"}}, "active"),  # not ready yet
        (200, {"ready": True, "leader": None}, None),  # ha off
        (0, None, None),  # not answering (killed, starting)
        (500, {"detail": "boom"}, None),
    ],
)
def test_role_of_readyz_answer(status: int, body: Any, role: str | None) -> None:
    assert role_of(status, body) == role


def _exposition(view: dict[str, Any]) -> str:
    class Leader:
        def collect(self) -> Iterator[Metric]:
            yield from leader_families(view)

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Leader())
    return generate_latest(registry).decode()


def test_leader_gauges_active_replica_from_the_service_exposition() -> None:
    text = _exposition({"role": "active", "replica": "b", "holder": "b", "epoch": 7})
    assert leader_gauges(text) == {"leader": {"b": 1.0}, "epoch": 7.0}


def test_leader_gauges_standby_before_any_lease_read_has_no_epoch() -> None:
    text = _exposition({"role": "standby", "replica": "a", "holder": None, "epoch": None})
    assert leader_gauges(text) == {"leader": {"a": 0.0}, "epoch": None}


def test_leader_gauges_ha_off_finds_nothing() -> None:
    assert leader_gauges("offsetguard_up 1\n# HELP x y\n") == {"leader": {}, "epoch": None}


def test_per_second_counters_over_the_window() -> None:
    before = {"xact_commit": 100.0, "lease_row_updates": 10.0}
    after = {"xact_commit": 700.0, "lease_row_updates": 70.0, "new": 5.0}
    assert per_second(before, after, 120.0) == {"xact_commit": 5.0, "lease_row_updates": 0.5}


def test_result_line_names_percentiles_roles_and_an_error() -> None:
    result = {
        "failover": {"n": 12, "p50_s": 10.1, "p99_s": 12.3, "max_s": 12.3, "min_s": 8.2},
        "rounds_over_bound": 0,
        "both_active_seen": 0,
        "error": "round 13: RuntimeError('a a ready standby: not within 300 s')",
        "steady": {
            "active": {"replica": "a", "cpu_s_per_min": 3.1, "peak_rss_mb": 150.0},
            "standby": {"replica": "b", "cpu_s_per_min": 1.2, "peak_rss_mb": 120.0},
            "database_per_s": {"xact_commit": 4.0},
        },
    }
    line = result_line(result)
    assert line.startswith("RESULT failover over 12 kills: p50 10.1 s, p99 12.3 s, max 12.3 s")
    assert "ERROR round 13" in line
    assert "active 3.1 CPU s/min, peak RSS 150.0 MB; standby 1.2 CPU s/min" in line
    assert "database per s {'xact_commit': 4.0}" in line
