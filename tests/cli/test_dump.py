"""``offsetguard dump`` pieces that need no Kafka: argument parsing and the throttled progress line."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from cli.dump import ProgressLine, _settings
from cli.main import build_parser
from collectors.errors import ConfigError


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_dump_parser_bootstrap_and_group_parsed() -> None:
    args = build_parser().parse_args(["dump", "--bootstrap", "127.0.0.1:9092", "--group", "g", "--out", "d"])
    assert (args.bootstrap, args.group, str(args.out), args.trigger) == ("127.0.0.1:9092", "g", "d", "manual")


def test_dump_parser_cluster_and_bootstrap_together_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["dump", "--cluster", "c", "--bootstrap", "h:1", "--group", "g"])


def test_dump_parser_group_missing_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["dump", "--bootstrap", "h:1"])


def test_progress_line_within_interval_throttled_final_always_shown() -> None:
    out, clock = io.StringIO(), Clock()
    progress = ProgressLine(out, every=0.5, clock=clock)
    progress(1, 100)
    clock.now = 0.2
    progress(2, 100)
    clock.now = 0.6
    progress(50, 100)
    clock.now = 0.7
    progress(100, 100)
    assert progress.printed == 3
    assert out.getvalue().split("\r")[1:] == [
        "dump: 1/100 offsets read (1%)",
        "dump: 50/100 offsets read (50%)",
        "dump: 100/100 offsets read (100%)\n",
    ]


def test_progress_line_empty_range_reports_complete() -> None:
    out = io.StringIO()
    ProgressLine(out)(0, 0)
    assert out.getvalue() == "\rdump: 0/0 offsets read (100%)\n"


def test_dump_settings_named_cluster_from_config(tmp_path: Path) -> None:
    config = tmp_path / "og.yaml"
    config.write_text("clusters:\n  - name: prod\n    bootstrap_servers: k1:9092,k2:9092\n")
    args = build_parser().parse_args(["dump", "--cluster", "prod", "--group", "g", "--config", str(config)])
    settings, cluster = _settings(args)
    assert (cluster.name, cluster.bootstrap_servers) == ("prod", ["k1:9092", "k2:9092"])
    assert settings.snapshots.keep == 50


def test_dump_settings_unknown_cluster_refused(tmp_path: Path) -> None:
    config = tmp_path / "og.yaml"
    config.write_text("clusters: []\n")
    args = build_parser().parse_args(["dump", "--cluster", "nope", "--group", "g", "--config", str(config)])
    with pytest.raises(ConfigError, match="nope"):
        _settings(args)


def test_dump_settings_bootstrap_named_adhoc_cluster() -> None:
    args = build_parser().parse_args(["dump", "--bootstrap", "127.0.0.1:9092", "--group", "g"])
    assert _settings(args)[1].name == "adhoc"
