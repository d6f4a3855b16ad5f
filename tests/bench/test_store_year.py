"""bench/store_year at a tiny scale, so that it cannot rot: days written, sizes taken, old alerts pruned."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.store_year import run


def test_store_year_tiny_fleet_sized_at_horizon_and_end_with_old_alerts_pruned(tmp_path: Path) -> None:
    args = argparse.Namespace(
        groups=6, partitions=1, step=21600.0, days=5, incidents=2, lag_alerts=2, stuck=1,
        retention_days=1.0, alerts_retention_days=2.0, requests=1, no_serve=True, serve_only=False,
        settle=0.0,
        out=tmp_path / "store_year.json", keep=tmp_path / "store",
    )  # fmt: skip
    result = run(args)
    assert json.loads(args.out.read_text()) == result
    assert result["horizon_days"] == 2 and set(result["sizes"]) == {"2", "5"}
    end = result["sizes"]["5"]["rows"]
    # a day's alerts: 2 incidents + 2 lag alerts; the stuck group's lag alert fires throughout
    assert end["alerts"] == 1 + 4 * 2  # the last two days' (and the stuck one) kept, three days' pruned
    assert end["committed_history"] < 6 * 4 * 5  # history expired past a day (4 samples a day)
    assert "size_ratio_year_to_horizon" in result and "serve" not in result
