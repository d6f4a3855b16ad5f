from alerts import counters
from alerts.counters import (
    FETCH_ERRORS,
    OUT_OF_RANGE,
    UNCLEAN_ELECTIONS,
    counter_increases,
    counter_observed,
    counter_values,
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


def test_counter_observed_needs_the_same_broker_in_both_scrapes() -> None:
    prev = {MetricKey("1", UNCLEAN_ELECTIONS, ()): 0.0}
    assert counter_observed(prev, metrics(0, {1: {UNCLEAN_ELECTIONS: 0}}), UNCLEAN_ELECTIONS)
    assert not counter_observed(prev, metrics(0, {2: {UNCLEAN_ELECTIONS: 0}}), UNCLEAN_ELECTIONS)
    assert not counter_observed(prev, None, UNCLEAN_ELECTIONS)
