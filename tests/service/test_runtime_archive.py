import asyncio
from pathlib import Path

import pytest

from service.runtime import build_runtime
from service.settings import load_settings


def _settings(tmp_path: Path, archive: bool) -> object:
    return load_settings(
        clusters=[{"name": "c1", "bootstrap_servers": "127.0.0.1:1"}],
        store={"path": str(tmp_path / "og.db")},
        archive={"enabled": archive, "directory": str(tmp_path / "archive")},
    )


@pytest.mark.parametrize("archive", [True, False])
def test_build_runtime_archive_setting_puts_archive_sink_in_front_of_tail(
    tmp_path: Path, archive: bool
) -> None:
    from pipeline.archive import ArchiveSink

    runtime = build_runtime(_settings(tmp_path, archive))  # type: ignore[arg-type]
    try:
        [tail] = runtime.tails
        assert isinstance(tail.sink, ArchiveSink) is archive
    finally:
        asyncio.run(runtime.stop())  # never started: closes the stores and clients
