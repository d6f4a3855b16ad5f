"""kill -9 while writing: every write the process reported as committed is there after reopening."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from store import Store
from store.settings import StoreSettings

WRITER = """
import sys
from pathlib import Path

from collectors.model import CommittedObservation, CommittedOffset
from store.settings import StoreSettings
from store import Store

store = Store.open(StoreSettings(path=Path(sys.argv[1])))
i = 0
while True:
    # Big enough that the kill usually lands inside a transaction.
    offsets = tuple(CommittedOffset("g", "t", p, i, 1) for p in range(2000))
    store.record_committed(CommittedObservation("c1", 1_700_000_000.0 + i, offsets, ("g",)))
    print(i, flush=True)
    i += 1
"""
REPORTS_BEFORE_KILL = 25


@pytest.mark.timeout(120)
def test_store_killed_mid_loop_keeps_every_reported_write(tmp_path: Path) -> None:
    path = tmp_path / "durable.db"
    repo = Path(__file__).resolve().parents[2]
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    reported: list[int] = []
    try:
        for line in child.stdout:
            reported.append(int(line))
            if len(reported) >= REPORTS_BEFORE_KILL:
                break
    finally:
        os.kill(child.pid, signal.SIGKILL)
        _, stderr = child.communicate(timeout=30)
    # Lines still in the pipe were printed after their commit returned: they count as reported too.
    assert child.returncode == -signal.SIGKILL, stderr
    assert len(reported) >= REPORTS_BEFORE_KILL, stderr
    last = reported[-1]

    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with Store.open(StoreSettings(path=path)) as store:
        history = store.committed_history("c1", "g", partition=0)
        assert [p.offset for p in history][: last + 1] == list(range(last + 1))
        latest = store.latest_committed("c1", "g")
        assert len(latest) == 2000
        assert min(p.offset or 0 for p in latest) >= last
