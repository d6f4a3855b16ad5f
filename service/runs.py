"""Whether a collector has run, and which collectors make the first picture: one definition for the
scheduler's first round and the metrics' standing renders (imports nothing, so the render worker can read
it without the scheduler)."""

from __future__ import annotations

from typing import Protocol

# The collectors of the first complete picture (what /metrics shows of a cluster): the tails, detection, the
# store's first writes and the broker-metrics and configs collectors wait for their first runs.
FIRST_PICTURE = ("metadata", "offsets", "groups", "committed")


class RunOutcomes(Protocol):
    """What :func:`has_run` reads of a collector status (a ``CollectorStatus`` or a copy of it)."""

    @property
    def last_success_at(self) -> float | None: ...

    @property
    def failures(self) -> int: ...


def has_run(status: RunOutcomes) -> bool:
    """Whether the collector has finished a run, succeeded or failed."""
    return status.last_success_at is not None or status.failures > 0
