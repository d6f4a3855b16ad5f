from alerts import counters
from alerts.counters import (
    FETCH_ERRORS,
    OUT_OF_RANGE,
    UNCLEAN_ELECTIONS,
    counter_increases,
    counter_values,
    unclean_counter_seen_at,
)
from alerts.state import MetricKey
from collectors import broker_metrics
from tests.alerts.builders import metrics


def test_counter_names_match_broker_metrics_collector() -> None:
    assert counters.UNCLEAN_ELECTIONS == broker_metrics.UNCLEAN_ELECTIONS
    assert counters.FETCH_ERRORS == broker_metrics.FETCH_ERRORS
    for name in (
        counters.CLEANER_SINCE_LAST_RUN,
        counters.CLEANER_DIRTY_PERCENT,
        counters.CLEANER_UNCLEANABLE,
        counters.CLEANER_DEAD_THREADS,
    ):
        assert name in broker_metrics.FAMILIES


def test_counter_values_keyed_by_broker_name_and_labels() -> None:
    got = counter_values(metrics(0, {2: {UNCLEAN_ELECTIONS: 3}}))
    assert got == {MetricKey("2", UNCLEAN_ELECTIONS, ()): 3}


def test_counter_increases_only_matching_labels_and_known_brokers() -> None:
    prev = {MetricKey("1", FETCH_ERRORS, OUT_OF_RANGE): 10.0}
    now = metrics(0, {1: {FETCH_ERRORS: 15}, 2: {FETCH_ERRORS: 50}}, dict(OUT_OF_RANGE))
    assert counter_increases(prev, now, FETCH_ERRORS, OUT_OF_RANGE) == {"1": 5.0}


def test_unclean_counter_seen_at_kept_until_a_scrape_reports_it_again() -> None:
    assert unclean_counter_seen_at(None, metrics(5, {1: {UNCLEAN_ELECTIONS: 0}})) == 5
    assert unclean_counter_seen_at(5, metrics(9, {2: {FETCH_ERRORS: 1}})) == 5  # the controller missed
    assert unclean_counter_seen_at(5, None) == 5
