"""The retry schedule (pure): exponential backoff with jitter, capped, and when to give up."""

from __future__ import annotations

import random
from dataclasses import dataclass

from service.settings import RetrySettings


@dataclass(frozen=True, slots=True)
class Backoff:
    """Attempt ``n`` (1 = the first failure) waits ``min(max, initial * multiplier**(n-1))``, reduced
    by a random fraction of up to ``jitter`` so that many rows failing together do not retry together."""

    initial_seconds: float = 1.0
    max_seconds: float = 300.0
    multiplier: float = 2.0
    jitter: float = 0.2
    give_up_after_seconds: float = 86_400.0
    max_attempts: int | None = None

    @classmethod
    def from_settings(cls, s: RetrySettings) -> Backoff:
        return cls(
            s.initial_seconds, s.max_seconds, s.multiplier, s.jitter, s.give_up_after_seconds, s.max_attempts
        )

    def ceiling(self, attempts: int) -> float:
        """The delay after ``attempts`` failed attempts, before jitter."""
        exponent = max(attempts - 1, 0)
        # Step by step up to the cap: multiplier**exponent would overflow a float after enough attempts.
        delay = self.initial_seconds
        for _ in range(exponent):
            delay *= self.multiplier
            if delay >= self.max_seconds:
                return self.max_seconds
        return min(delay, self.max_seconds)

    def delay(self, attempts: int, rng: random.Random) -> float:
        """Seconds to wait after ``attempts`` failed attempts (jittered)."""
        ceiling = self.ceiling(attempts)
        return ceiling * (1.0 - self.jitter * rng.random())

    def give_up(self, attempts: int, created_at: float, now: float) -> bool:
        """True once ``attempts`` reached ``max_attempts`` or the row is older than the give-up age."""
        if self.max_attempts is not None and attempts >= self.max_attempts:
            return True
        return now - created_at >= self.give_up_after_seconds
