"""``offsetguard store check``: exit 0 on a good file, 1 on a damaged one (with the recovery), 2 when it
cannot be opened; the file is never written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli.main import main
from store import Store
from store.settings import StoreSettings
from tests.alerts.builders import offsets


def _good(path: Path) -> Path:
    with Store.open(StoreSettings(path=path)) as store:
        store.record_offsets(offsets(1.0, {("t", p): (0, 100 + p) for p in range(2000)}))
    return path


def test_store_check_good_file_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _good(tmp_path / "og.db")

    code = main(["store", "check", "--path", str(path)])

    assert code == 0
    assert capsys.readouterr().out == f"{path}: ok (integrity_check)\n"


def test_store_check_quick_good_file_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _good(tmp_path / "og.db")

    assert main(["store", "check", "--quick", "--path", str(path)]) == 0
    assert "ok (quick_check)" in capsys.readouterr().out


def test_store_check_garbage_file_corrupt_with_recovery(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "og.db"
    path.write_bytes(b"garbage " * 1000)

    code = main(["store", "check", "--path", str(path)])

    err = capsys.readouterr().err
    assert code == 1
    assert f"{path}: damaged" in err
    assert "file is not a database" in err
    assert f"recovery: stop offsetguard, then either restore {path} from a backup" in err
    assert "offset history, alerts, silences, the notification queue" in err  # what moving it aside loses
    assert path.read_bytes() == b"garbage " * 1000


def test_store_check_damaged_pages_corrupt_lists_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _good(tmp_path / "og.db")
    data = bytearray(path.read_bytes())
    page = 4096
    for at in range(2 * page, len(data), page):  # every page after the schema's: B-tree headers wiped
        data[at : at + 16] = b"\xff" * 16
    path.write_bytes(bytes(data))

    code = main(["store", "check", "--path", str(path)])

    err = capsys.readouterr().err
    assert code == 1
    assert f"{path}: damaged (integrity_check found" in err
    assert "recovery:" in err


def test_store_check_missing_file_cannot_open(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "nothing.db"

    code = main(["store", "check", "--path", str(path)])

    assert code == 2
    assert capsys.readouterr().err == f"{path}: cannot be opened: no such file\n"
    assert not path.exists()  # never created


def test_store_check_config_reads_store_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _good(tmp_path / "og.db")
    config = tmp_path / "og.yaml"
    config.write_text(f"store:\n  path: {path}\n")

    assert main(["store", "check", "--config", str(config)]) == 0
    assert str(path) in capsys.readouterr().out


def test_serve_garbage_store_file_clear_error_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "og.db"
    path.write_bytes(b"garbage " * 1000)
    config = tmp_path / "og.yaml"
    config.write_text(
        f"clusters:\n  - name: c1\n    bootstrap_servers: 127.0.0.1:1\nstore:\n  path: {path}\nhttp_port: 1\n"
    )

    done = subprocess.run(
        [sys.executable, "-m", "cli", "serve", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 2
    assert done.stderr.startswith(f"offsetguard: error: the store file {path} is damaged")
    assert f"mv {path} {path}.corrupt" in done.stderr
    assert "Traceback" not in done.stderr
