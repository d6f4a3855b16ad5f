"""The latest observation of each kind per cluster, kept in memory for collectors that depend on others
(offsets need the partition leaders from metadata) and for fast reads."""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


class LatestObservations:
    """Latest observation per (cluster, observation class); replaced whole, never mutated."""

    def __init__(self) -> None:
        self._latest: dict[tuple[str, type[Any]], Any] = {}

    async def put(self, observation: Any) -> None:
        """Sink for the scheduler: remember ``observation`` as the newest of its kind."""
        self._latest[(observation.cluster, type(observation))] = observation

    def get(self, cluster: str, kind: type[T]) -> T | None:
        found = self._latest.get((cluster, kind))
        return found if isinstance(found, kind) else None
