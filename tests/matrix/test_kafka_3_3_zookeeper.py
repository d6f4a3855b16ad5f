"""Kafka 3.3.2 in ZooKeeper mode, the oldest release tested (see :mod:`tests.matrix.scenario`)."""

import pytest

from tests.matrix.scenario import *  # noqa: F403 (the tests this module runs on its release)
from tests.matrix.scenario import release_fixture

pytestmark = pytest.mark.integration
RELEASE = ("3.3", "zookeeper")  # (Kafka version, mode): see tests.matrix.ahead
matrix = release_fixture(*RELEASE)
