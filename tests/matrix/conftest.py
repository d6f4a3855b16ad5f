"""The version matrix's session fixture: every release's run, set up ahead (:mod:`tests.matrix.ahead`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.matrix.ahead import Ahead, Release
from tests.matrix.scenario import MatrixRun, matrix_run


@pytest.fixture(scope="session")
def matrix_ahead(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Ahead[MatrixRun]]:
    """The releases of the matrix modules this session runs (each module's ``RELEASE``), in its order."""
    releases: list[Release] = []
    for item in request.session.items:
        release = getattr(getattr(item, "module", None), "RELEASE", None)
        if release is not None and release not in releases:
            releases.append(release)

    def workdir(release: Release) -> Path:
        return tmp_path_factory.mktemp(f"kafka-{release[0]}-{release[1]}")

    ahead: Ahead[MatrixRun] = Ahead(releases, matrix_run, workdir)
    try:
        yield ahead
    finally:
        ahead.close()
