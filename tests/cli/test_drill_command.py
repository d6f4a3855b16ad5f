"""``offsetguard drill``: arguments and the table (the drills themselves run on the sandbox in
``tests/drills/integration``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.drill import render
from cli.main import main
from drills.model import DrillResult


def test_bad_arguments_exit_2_with_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "og.yaml"
    config.write_text('{"clusters": [{"name": "c1", "bootstrap_servers": "127.0.0.1:1"}]}')
    assert main(["drill", "rewind", "--config", str(config), "--timeout", "0"]) == 2
    assert "--timeout must be > 0" in capsys.readouterr().err
    assert main(["drill", "lag", "--config", str(config), "--cluster", "c9"]) == 2
    assert "no cluster 'c9'" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse: an unknown kind, or neither --config nor --sandbox
        main(["drill", "meteor", "--config", str(config)])
    with pytest.raises(SystemExit):
        main(["drill", "rewind"])


def test_table_shows_expected_seen_magnitude_latencies_and_verdict() -> None:
    passed = DrillResult(
        "rewind",
        "offset_rewind/critical",
        "t",
        "g",
        True,
        "as expected",
        seen_kind="offset_rewind",
        seen_severity="critical",
        magnitude={"messages_replayed": 100},
        detection_latency_s=2.04,
        notification="delivered",
        notification_latency_s=2.6,
    )
    failed = DrillResult("lag", "lag_high/warning", "t2", "g2", False, "no lag_high alert within 120 s")
    quiet = DrillResult(
        "coordinator-failover",
        "none",
        "t3",
        "g3",
        True,
        "no alert in 15 s",
        magnitude={"coordinator_before": 1, "coordinator_after": 2},
        detection_latency_s=1.5,
    )
    lines = render([passed, failed, quiet]).splitlines()
    assert lines[0].split() == [
        "DRILL",
        "EXPECTED",
        "SEEN",
        "MAGNITUDE",
        "DETECTED",
        "IN",
        "NOTIFIED",
        "RESULT",
    ]
    assert lines[1].split() == [
        "rewind",
        "offset_rewind/critical",
        "offset_rewind/critical",
        "messages_replayed=100",
        "2.0",
        "s",
        "delivered",
        "in",
        "2.6",
        "s",
        "PASS",
    ]
    assert lines[2].split() == ["lag", "lag_high/warning", "-", "-", "-", "none", "queued", "FAIL"]
    assert lines[3].split() == [
        "coordinator-failover",
        "none",
        "none",
        "coordinator_after=2,",
        "coordinator_before=1",
        "1.5",
        "s",
        "none",
        "queued",
        "PASS",
    ]
