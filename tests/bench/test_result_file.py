import json
from pathlib import Path

from bench.result_file import RESULTS, write_result


def test_write_result_indented_json_under_results_or_at_an_absolute_path(tmp_path: Path) -> None:
    target = tmp_path / "deeper" / "figures.json"
    written = write_result(str(target), {"benchmark": "x", "cpu_s": 0.5})
    assert written == target
    assert target.read_text() == '{\n  "benchmark": "x",\n  "cpu_s": 0.5\n}\n'
    assert json.loads(target.read_text()) == {"benchmark": "x", "cpu_s": 0.5}
    assert RESULTS.name == "results" and RESULTS.parent.name == "bench"
