"""Kafka 3.9.1 in ZooKeeper mode: the last release with ZooKeeper (see :mod:`tests.matrix.scenario`)."""

import pytest

from tests.matrix.scenario import *  # noqa: F403 (the tests this module runs on its release)
from tests.matrix.scenario import release_fixture

pytestmark = pytest.mark.integration
RELEASE = ("3.9", "zookeeper")  # (Kafka version, mode): see tests.matrix.ahead
matrix = release_fixture(*RELEASE)
