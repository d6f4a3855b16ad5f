"""Kafka 4.0.2, KRaft only; 4.1.2 (the default) runs the rest (see :mod:`tests.matrix.scenario`)."""

import pytest

from tests.matrix.scenario import *  # noqa: F403 (the tests this module runs on its release)
from tests.matrix.scenario import release_fixture

pytestmark = pytest.mark.integration
RELEASE = ("4.0", "kraft")  # (Kafka version, mode): see tests.matrix.ahead
matrix = release_fixture(*RELEASE)
