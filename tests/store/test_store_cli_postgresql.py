"""``offsetguard store check`` / ``store backup`` on a PostgreSQL store: refused, with PostgreSQL's own
tools named; ``config check`` never prints the URL's password."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cli.main import main
from tests.support.postgres import PASSWORD

URL = f"postgresql://offsetguard:{PASSWORD}@db.example:5432/offsetguard"


@pytest.fixture
def pg_config(tmp_path: Path) -> Path:
    path = tmp_path / "offsetguard.yaml"
    path.write_text(yaml.safe_dump({"store": {"url": URL}}))
    return path


@pytest.mark.parametrize(("command", "tool"), [("check", "pg_amcheck"), ("backup", "pg_dump")])
def test_store_cli_on_postgresql_refused_naming_its_tools(
    pg_config: Path, tmp_path: Path, command: str, tool: str, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = [str(tmp_path / "copy.db")] if command == "backup" else []
    assert main(["store", command, "--config", str(pg_config), *extra]) == 2
    err = capsys.readouterr().err
    assert "works on the SQLite store file" in err and "PostgreSQL db.example:5432/offsetguard" in err
    assert tool in err and PASSWORD not in err
    assert not (tmp_path / "copy.db").exists()


def test_config_check_redacts_the_store_url_password(
    pg_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["config", "check", str(pg_config)])
    out = capsys.readouterr().out
    assert "db.example:5432/offsetguard" in out and PASSWORD not in out
