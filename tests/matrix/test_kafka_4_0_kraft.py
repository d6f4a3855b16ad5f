"""Kafka 4.0.2, KRaft only; 4.1.2 (the default) runs the rest (see :mod:`tests.matrix.scenario`)."""

import pytest

from tests.matrix.scenario import *  # noqa: F403 (the tests this module runs on its release)
from tests.matrix.scenario import release_fixture

pytestmark = pytest.mark.integration
matrix = release_fixture("4.0", "kraft")
