"""Progress of a running job on stderr: the current phase and Spark's task counts, about once a second.

:class:`Progress` polls the session's status tracker from a daemon thread (nothing runs inside Spark);
``phase(name)`` names what the driver is doing. ``quiet`` keeps only the phase lines.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

from pyspark import SparkContext


class Progress:
    """Prints ``[elapsed] phase: done/total tasks (stage ids)`` lines until :meth:`close`."""

    def __init__(
        self, sc: SparkContext | None, stream: TextIO = sys.stderr, *, every: float = 1.0, quiet: bool = False
    ) -> None:
        self._sc = sc
        self._stream = stream
        self._every = every
        self._quiet = quiet
        self._phase = "starting"
        self._t0 = time.monotonic()
        self._stop = threading.Event()
        self._last = ""
        self.lines: list[str] = []
        self._thread: threading.Thread | None = None
        if sc is not None and not quiet:
            self._thread = threading.Thread(target=self._run, name="pipeline-progress", daemon=True)
            self._thread.start()

    def phase(self, name: str) -> None:
        self._phase = name
        self._print(f"{name} ...")

    def _print(self, text: str) -> None:
        line = f"[{time.monotonic() - self._t0:7.1f}s] {text}"
        self.lines.append(line)
        print(line, file=self._stream, flush=True)

    def _tasks(self) -> str | None:
        assert self._sc is not None
        tracker = self._sc.statusTracker()
        done = total = 0
        stages = []
        for stage_id in tracker.getActiveStageIds():
            info = tracker.getStageInfo(stage_id)
            if info is None:
                continue
            stages.append(str(stage_id))
            done += info.numCompletedTasks
            total += info.numTasks
        if not stages:
            return None
        return f"{self._phase}: {done}/{total} tasks (stages {', '.join(stages)})"

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            try:
                text = self._tasks()
            except Exception:  # the context is stopping: nothing to report any more
                return
            if text is not None and text != self._last:
                self._last = text
                self._print(text)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        self._print("done")
