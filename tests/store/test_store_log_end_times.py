"""The batched log-end crossing lookup (store.log_end_times) on both backends: the tests of
tests/service/metrics, run here against the parametrised store (SQLite's one-row JSON answer and
PostgreSQL's rows give the same answers, every bit of the times kept)."""

from tests.service.metrics.test_store_log_end_times import (  # noqa: F401  (collected here, on both backends)
    test_log_end_reached_at_many_exact_times_and_large_offsets,
    test_log_end_reached_at_many_matches_single_lookups,
    test_log_end_reached_at_many_nothing_wanted_empty,
)
