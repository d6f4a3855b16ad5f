"""The truth matrix on the real 3-broker sandbox: every cell's claims against what its consumers really
read (operations x real clients x group kinds; see :mod:`tests.truth.matrix`).

One runtime watches every cell; the cells run side by side on their own topics and groups, the
unclean-election ones together around one election. Set ``OFFSETGUARD_TRUTH_TABLE`` to a path to keep the
claim-versus-truth table (``bench/truth.py`` does, into ``bench/results/truth.json``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.cluster import SandboxCluster
from tests.e2e.harness import RuntimeThread, e2e_settings
from tests.truth.matrix import NotRun, Outcome, catalog, run_matrix, table

# the first test also runs the whole matrix (the module fixture): minutes, not the default 300 s
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]
# OFFSETGUARD_TRUTH_CELLS: a regular expression, to run only the cells it finds (default: every cell)
CELLS = [c for c in catalog() if re.search(os.environ.get("OFFSETGUARD_TRUTH_CELLS", ""), c.id)]
# OFFSETGUARD_TRUTH_WORKERS: how many cells run side by side (default: run_matrix's)
WORKERS = int(os.environ.get("OFFSETGUARD_TRUTH_WORKERS") or 0)


PHASES: dict[str, float] = {}  # each phase's wall seconds, for the table


@pytest.fixture(scope="module")
def matrix(kafka3: SandboxCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Outcome]]:
    PHASES.clear()
    tmp = tmp_path_factory.mktemp("truth")
    runtime = RuntimeThread(e2e_settings(kafka3, tmp))
    try:
        runtime.wait_caught_up()
        workers = {"workers": WORKERS} if WORKERS > 0 else {}
        yield run_matrix(kafka3, runtime, tmp / "journals", CELLS, phases=PHASES, **workers)
    finally:
        runtime.stop()


@pytest.mark.parametrize("cell", [c.id for c in CELLS])
def test_matrix_cell_claims_within_the_truth(matrix: dict[str, Outcome], cell: str) -> None:
    outcome = matrix[cell]
    if isinstance(outcome, NotRun):
        if outcome.skipped:
            pytest.skip(outcome.reason)
        pytest.fail(f"{cell} did not run to its end:\n{outcome.reason}")
    account = json.dumps(outcome.row(), indent=1)
    assert outcome.problems == (), f"{cell}: {list(outcome.problems)}\n{account}"


def test_matrix_table_lists_every_cell(matrix: dict[str, Outcome], tmp_path: Path) -> None:
    path = Path(os.environ.get("OFFSETGUARD_TRUTH_TABLE") or tmp_path / "truth.json")
    rows = table(CELLS, matrix, PHASES)
    path.write_text(json.dumps(rows, indent=1) + "\n")
    assert [r["cell"] for r in json.loads(path.read_text())["cells"]] == [c.id for c in CELLS]
