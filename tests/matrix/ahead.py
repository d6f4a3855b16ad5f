"""The version matrix's runs, each set up while the release before it is tested.

A release's run (its cluster, ``offsetguard serve`` on it, both scenarios replayed) takes 18-27 s, most of
it waiting on brokers and on the service's next cycle; four releases set up one after another were the
suite's longest serial wait. When a module asks for its release's run, the next matrix module's (in the
order the session runs them) starts setting up in a thread, so at most two releases run at once: one
tested while the next is set up. A run is torn down when its module ends, or at the session's end if its
module never asked for it (an interrupted session).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Generic, TypeVar

Release = tuple[str, str]  # (Kafka version, mode)
T = TypeVar("T")
# releases set up ahead of the one asked for: one (two alive at once). Two ahead ran no faster on two
# cores (the whole matrix 83 s either way, against ~117 s one after another): setting up is CPU-bound
DEPTH = 1


class Ahead(Generic[T]):
    """Runs of ``releases`` (in the order they will be asked for), each set up by ``setup(release, work)``:
    a generator that yields the run once set up and tears it down when closed."""

    def __init__(
        self,
        releases: Sequence[Release],
        setup: Callable[[Release, Path], Generator[T, None, None]],
        workdir: Callable[[Release], Path],
    ) -> None:
        self._releases = list(releases)
        self._setup = setup
        self._workdir = workdir
        self._pool = ThreadPoolExecutor(max_workers=DEPTH + 1, thread_name_prefix="matrix-ahead")
        self._lock = threading.Lock()
        self._started: dict[Release, tuple[Generator[T, None, None], Future[T]]] = {}

    def take(self, release: Release) -> T:
        """``release``'s run once set up (its setup's error if it failed); the next release starts now."""
        self._start(release)
        if release in self._releases:
            after = self._releases.index(release) + 1
            for later in self._releases[after : after + DEPTH]:
                self._start(later)
        return self._started[release][1].result()

    def done(self, release: Release) -> None:
        """Tear ``release``'s run down (its setup awaited first, if still going)."""
        with self._lock:
            started = self._started.pop(release, None)
        if started is not None:
            self._close(*started)

    def close(self) -> None:
        """Tear down every run not yet done, and stop the setup threads."""
        with self._lock:
            left = list(self._started.values())
            self._started.clear()
        for generator, future in left:
            self._close(generator, future)
        self._pool.shutdown(wait=True)

    def _start(self, release: Release) -> None:
        with self._lock:
            if release in self._started:
                return
            generator = self._setup(release, self._workdir(release))
            self._started[release] = (generator, self._pool.submit(next, generator))

    @staticmethod
    def _close(generator: Generator[T, None, None], future: Future[T]) -> None:
        if future.exception() is None:  # waits for the setup; a failed one has torn itself down
            generator.close()  # runs the setup's finally: its teardown
