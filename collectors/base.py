"""The shape every collector has: the scheduler knows nothing else about them."""

from __future__ import annotations

from typing import Protocol, TypeVar

T_co = TypeVar("T_co", covariant=True)


class Collector(Protocol[T_co]):
    """One concern of one cluster, observed on a schedule.

    ``collect`` returns a frozen observation stamped with cluster and time; partial failures are listed in
    the observation's ``failures``; a collector that could observe nothing raises an
    :class:`collectors.errors.OffsetguardError`. Nothing else may escape.
    """

    @property
    def name(self) -> str: ...

    @property
    def cluster(self) -> str: ...

    async def collect(self) -> T_co: ...
