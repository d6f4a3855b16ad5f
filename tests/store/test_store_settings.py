"""``store.url`` and its password: what is accepted, what is refused, and where the password may come from."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from service.settings import load_settings
from store.settings import StoreSettings


def test_store_settings_without_url_is_the_sqlite_file() -> None:
    assert StoreSettings().url is None and StoreSettings(url="").url is None


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("mysql://og@db:3306/og", "scheme mysql"),
        ("db:5432/og", "must be a postgresql://"),
        ("postgresql:///og", "must name the PostgreSQL host"),
        ("postgresql://og@db:5432", "must name the database"),
        ("postgresql://og@db:port/og", "not a URL"),
    ],
)
def test_store_url_not_a_postgresql_url_refused(url: str, why: str) -> None:
    with pytest.raises(ValidationError, match=why):
        StoreSettings(url=url)


def test_store_password_from_file_env_or_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = "postgresql://og@db:5432/og"
    secret = tmp_path / "pw"
    secret.write_text("from-file\n")
    monkeypatch.setenv("OG_PG_PASSWORD", "from-env")
    read = [
        StoreSettings(url=url, password_file=str(secret)).password,  # type: ignore[call-arg]
        StoreSettings(url=url, password_env="OG_PG_PASSWORD").password,  # type: ignore[call-arg]
        StoreSettings(url=url, password="given").password,  # type: ignore[arg-type]
    ]
    assert [p.get_secret_value() if p else None for p in read] == ["from-file", "from-env", "given"]


@pytest.mark.parametrize(
    ("values", "why"),
    [
        ({"password": "x"}, "set url too"),
        ({"url": "postgresql://og:x@db/og", "password": "y"}, "not both"),
        ({"url": "postgresql://og@db/og", "password": "x", "password_env": "X"}, "exactly one"),
    ],
)
def test_store_password_misplaced_refused(values: dict[str, str], why: str) -> None:
    with pytest.raises(ValidationError, match=why):
        StoreSettings(**values)  # type: ignore[arg-type]


def test_store_settings_repr_and_errors_never_show_the_password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OFFSETGUARD_STORE__URL", "postgresql://og:hunter2@db:5432/og")
    settings = load_settings()
    assert settings.store.url == "postgresql://og:hunter2@db:5432/og"
    assert "hunter2" not in repr(settings.store) and "hunter2" not in repr(settings)
