"""Kafka 3.9.1 in KRaft mode (see :mod:`tests.matrix.scenario`)."""

import pytest

from tests.matrix.scenario import *  # noqa: F403 (the tests this module runs on its release)
from tests.matrix.scenario import release_fixture

pytestmark = pytest.mark.integration
matrix = release_fixture("3.9", "kraft")
