"""tests/parallel.py: under xdist, every test of a real component runs on one worker, in order."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.parallel import APART, GROUP, group, needs_real

ROOT = Path(__file__).resolve().parents[1]

SUITE = """
import json, os, pathlib, pytest

def _note(name):
    out = pathlib.Path(os.environ["NOTES"]) / name
    out.write_text(json.dumps(os.environ.get("PYTEST_XDIST_WORKER")))

@pytest.fixture(scope="session")
def spark():
    return "a session"

@pytest.mark.integration
@pytest.mark.parametrize("n", range(6))
def test_real(n):
    _note(f"real-{n}")

@pytest.mark.integration
@pytest.mark.apart
@pytest.mark.parametrize("n", range(3))
def test_apart(n):
    _note(f"apart-{n}")

def test_uses_spark(spark):
    _note("spark")

@pytest.mark.parametrize("n", range(30))
def test_unit(n):
    _note(f"unit-{n}")
"""


def _run(tmp_path: Path, *args: str) -> dict[str, str | None]:
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_suite.py").write_text(SUITE)
    (tmp_path / "suite" / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n    integration: real\n    apart: apart\n"
    )
    notes = tmp_path / "notes"
    notes.mkdir()
    # as if run alone: not a worker of the xdist run this test itself may be on
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env.update(NOTES=str(notes), PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.parallel", "-p", "no:cacheprovider", *args],
        cwd=tmp_path / "suite",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {p.name: json.loads(p.read_text()) for p in notes.iterdir()}


def test_parallel_real_tests_on_one_worker_those_apart_on_one_the_others_on_both(tmp_path: Path) -> None:
    ran = _run(tmp_path, "-n", "2", "--dist", "loadgroup")
    assert len(ran) == 40
    real = {ran[f"real-{n}"] for n in range(6)} | {ran["spark"]}
    assert len(real) == 1 and real != {None}
    apart = {ran[f"apart-{n}"] for n in range(3)}
    assert len(apart) == 1 and apart != {None}
    assert {ran[f"unit-{n}"] for n in range(30)} <= {"gw0", "gw1"}


def test_parallel_without_xdist_one_process(tmp_path: Path) -> None:
    ran = _run(tmp_path, "-p", "no:xdist")
    assert len(ran) == 40 and set(ran.values()) == {None}


@pytest.mark.parametrize(
    ("markers", "fixtures", "expected"),
    [
        (("integration",), (), GROUP),
        ((), ("kafka3", "tmp_path"), GROUP),
        ((), ("tmp_path",), None),
        (("integration", "apart"), ("kafka1",), APART),
        ((), ("kafka1", "kafka_expiry"), APART),  # the expiry sandbox's users, marked or not
        (("integration",), ("kafka_sasl",), APART),
        (("apart",), ("tmp_path",), None),  # set apart, but nothing real: any worker
    ],
)
def test_group_by_marker_or_session_fixture(
    markers: tuple[str, ...], fixtures: tuple[str, ...], expected: str | None
) -> None:
    class Item:
        fixturenames = fixtures

        def get_closest_marker(self, name: str) -> object | None:
            return object() if name in markers else None

    assert needs_real(Item()) is (expected is not None)  # type: ignore[arg-type]
    assert group(Item()) == expected  # type: ignore[arg-type]
