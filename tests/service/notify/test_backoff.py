import random

import pytest

from service.notify.backoff import Backoff
from service.settings import RetrySettings


def test_backoff_ceiling_doubles_then_caps() -> None:
    b = Backoff(initial_seconds=1, max_seconds=30, multiplier=2)

    assert [b.ceiling(n) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]


def test_backoff_ceiling_huge_attempt_count_stays_capped() -> None:
    assert Backoff(initial_seconds=1, max_seconds=300, multiplier=10).ceiling(10_000) == 300


def test_backoff_delay_jitter_within_fraction_below_ceiling() -> None:
    b = Backoff(initial_seconds=10, max_seconds=1000, multiplier=2, jitter=0.2)
    rng = random.Random(7)

    delays = [b.delay(3, rng) for _ in range(500)]

    assert all(32.0 <= d <= 40.0 for d in delays)
    assert max(delays) - min(delays) > 5  # spread out, not one value


def test_backoff_delay_no_jitter_exact() -> None:
    assert Backoff(initial_seconds=2, jitter=0).delay(2, random.Random(1)) == 4


@pytest.mark.parametrize(
    ("attempts", "age", "expected"),
    [(1, 10.0, False), (5, 10.0, True), (1, 100.0, True), (4, 99.9, False)],
)
def test_backoff_give_up_by_attempts_or_age(attempts: int, age: float, expected: bool) -> None:
    b = Backoff(give_up_after_seconds=100, max_attempts=5)

    assert b.give_up(attempts, created_at=1000.0, now=1000.0 + age) is expected


def test_backoff_from_settings_takes_every_field() -> None:
    s = RetrySettings(
        initial_seconds=3, max_seconds=60, multiplier=3, jitter=0.5, give_up_after_seconds=7, max_attempts=4
    )

    assert Backoff.from_settings(s) == Backoff(3, 60, 3, 0.5, 7, 4)


def test_retry_settings_max_below_initial_refused() -> None:
    with pytest.raises(ValueError, match="max_seconds"):
        RetrySettings(initial_seconds=10, max_seconds=5)
