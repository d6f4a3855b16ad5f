"""The :class:`StoreHealth` of one store file: whether its writes succeed, shared by its store classes.

A write the disk refuses (:class:`~collectors.errors.StoreWriteError`: full, read-only, I/O error) marks
the store failing; a write that commits once ``settle_seconds`` passed without a refusal marks it healthy
again (on a full disk small writes still fit in the pages the file has, between refused larger ones: one
success is no sign that space returned). Each change is logged once (not once per failed row); every
failed write is counted, and so are the history rows given up while failing.
``/readyz`` and ``offsetguard_store_*`` read :meth:`StoreHealth.view`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from collectors.errors import StoreWriteError

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class HealthView:
    """One reading of :class:`StoreHealth`."""

    healthy: bool
    write_failures: int  # failed writes since start
    dropped_rows: int  # history rows given up while failing (never alerts, transitions or notifications)
    reason: str | None  # the last failure while failing (e.g. "SQLITE_FULL: record ... failed: ...")
    failing_since: float | None  # epoch seconds


class StoreHealth:
    """Thread-safe: the store classes report each write's fate from worker threads."""

    def __init__(
        self, path: str = "", *, settle_seconds: float = 10.0, clock: Callable[[], float] = time.time
    ) -> None:
        self.path = path
        self.settle_seconds = settle_seconds
        self._clock = clock
        self._last_failure = float("-inf")
        self._lock = threading.Lock()
        self._failures = 0
        self._dropped = 0
        self._reason: str | None = None
        self._since: float | None = None

    @property
    def healthy(self) -> bool:
        return self._since is None

    def failed(self, exc: StoreWriteError) -> None:
        """A write was refused: counted; the first one of a spell is logged."""
        with self._lock:
            self._failures += 1
            self._reason = f"{exc.code}: {exc.message}"
            self._last_failure = self._clock()
            first = self._since is None
            if first:
                self._since = self._last_failure
        if first:
            log.error(
                "store %s failing (%s): detection and notifications go on from memory, what must be "
                "written is kept and written when the disk takes writes again",
                self.path,
                self._reason,
            )

    def succeeded(self) -> None:
        """A write committed: healthy again if no write was refused for ``settle_seconds`` (logged once,
        with how long it failed)."""
        if self._since is None:  # the common case, without the lock
            return
        with self._lock:
            if self._clock() - self._last_failure < self.settle_seconds:
                return
            since, self._since, self._reason = self._since, None, None
        if since is not None:
            log.warning("store %s writable again after %.0f s", self.path, self._clock() - since)

    def dropped(self, rows: int) -> None:
        """``rows`` history rows were given up while failing."""
        with self._lock:
            self._dropped += rows

    def view(self) -> HealthView:
        with self._lock:
            return HealthView(self._since is None, self._failures, self._dropped, self._reason, self._since)
