"""Kafka 3.3.2 in ZooKeeper mode, the oldest release tested (see :mod:`tests.matrix.scenario`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.matrix.scenario import (  # noqa: F401 (the tests this module runs on its release)
    MatrixRun,
    matrix_run,
    test_every_offset_commit_decodes_as_the_release_s_console_formatter_prints_it,
    test_every_offsets_topic_record_decodes_as_the_release_itself_prints_it,
    test_fallbacks_are_exactly_those_the_release_needs,
    test_metrics_serve_the_lag_and_the_brokers,
    test_rewind_by_an_active_member_80_replayed_critical_snapshotted,
    test_serve_ready_every_collector_and_the_tail_clean,
    test_unclean_election_committed_50_beyond_the_truncated_log_end,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MatrixRun]:
    yield from matrix_run("3.3", "zookeeper", tmp_path_factory)
