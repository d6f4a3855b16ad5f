"""Where a benchmark writes its figures: ``bench/results/NAME``, as indented JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def write_result(name: str, result: Mapping[str, Any]) -> Path:
    """``result`` written to ``bench/results/name`` (an absolute ``name``: that path); the path written."""
    path = RESULTS / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")
    return path
