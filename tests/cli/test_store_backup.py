"""``offsetguard store backup DEST``: a consistent copy while a writer holds the store open (the WAL's
uncheckpointed rows included), never overwriting, never leaving a partial file."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from cli.main import main
from store import Store
from store.settings import StoreSettings
from tests.alerts.builders import offsets


def _rows(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        return int(conn.execute("SELECT count(*) FROM partition_offsets_history").fetchone()[0])


def test_backup_while_open_copies_what_the_wal_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, dest = tmp_path / "og.db", tmp_path / "backups" / "og-copy.db"
    dest.parent.mkdir()
    with Store.open(StoreSettings(path=source)) as store:  # open: rows sit in the WAL, not checkpointed
        store.record_offsets(offsets(1.0, {("t", p): (0, 100 + p) for p in range(500)}))
        assert Path(f"{source}-wal").stat().st_size > 0
        assert main(["store", "backup", "--path", str(source), str(dest)]) == 0
        store.record_offsets(offsets(2.0, {("t", p): (0, 200 + p) for p in range(500)}))
    assert f"{source} -> {dest}: " in capsys.readouterr().out
    assert not Path(f"{dest}-wal").exists()  # one self-contained file
    assert _rows(dest) == 500 < _rows(source)
    assert main(["store", "check", "--path", str(dest)]) == 0
    assert [p.name for p in dest.parent.iterdir()] == [dest.name]  # no partial file left


def test_backup_never_overwrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source, dest = tmp_path / "og.db", tmp_path / "taken.db"
    with Store.open(StoreSettings(path=source)):
        pass
    dest.write_bytes(b"precious")
    assert main(["store", "backup", "--path", str(source), str(dest)]) == 2
    assert "exists: a backup never overwrites a file" in capsys.readouterr().err
    assert dest.read_bytes() == b"precious"


def test_backup_of_a_missing_store_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["store", "backup", "--path", str(tmp_path / "absent.db"), str(tmp_path / "out.db")]) == 2
    assert "no store file at" in capsys.readouterr().err
    assert not (tmp_path / "out.db").exists()
