"""bench.firing: a run measures both quiet and refreshing evaluations, or is refused up front."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bench import firing


def _main(monkeypatch: pytest.MonkeyPatch, *args: str) -> None:
    monkeypatch.setattr(sys, "argv", ["bench.firing", *args])
    firing.main()


@pytest.mark.parametrize("args", [("--evaluations", "12"), ("--every", "30"), ("--every", "0")])
def test_a_run_without_a_quiet_or_a_refreshing_evaluation_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        _main(monkeypatch, "--firing", "10", *args)
    assert exit_.value.code == 2
    assert "both quiet and refreshing" in capsys.readouterr().err


def test_the_shortest_run_measures_both(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    out = tmp_path / "firing.json"
    _main(monkeypatch, "--firing", "50", "--evaluations", "13", "--out", str(out))
    result = json.loads(out.read_text())
    assert result["refreshing_cpu_s"]["count"] == 1
    assert result["setup"]["firing_at_end"] == 50
