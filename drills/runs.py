"""Drills started through the API (``POST /api/v1/drills``): one run at a time, in a background thread,
talking to the service's own API in-process (the caller's token, so its acknowledgements are the
caller's). Runs are kept in memory, the latest :data:`KEEP`."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from collectors.settings import ClusterSettings
from drills.kafka_io import DrillKafka
from drills.kinds import SPECS
from drills.model import DrillResult
from drills.runner import Options, run_drill
from drills.watch import ApiWatch
from service.api.client import ApiClient, Send

KEEP = 20
BASE_URL = "http://offsetguard.internal"


@dataclass
class DrillRun:
    id: str
    cluster: str
    kinds: list[str]
    started_at: float
    finished_at: float | None = None
    results: list[DrillResult] = field(default_factory=list)
    error: str | None = None

    @property
    def status(self) -> str:
        return "running" if self.finished_at is None else "done"

    def as_dict(self) -> dict[str, Any]:
        done = self.finished_at is not None
        return {
            "id": self.id,
            "cluster": self.cluster,
            "kinds": self.kinds,
            "status": self.status,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "passed": (self.error is None and all(r.passed for r in self.results)) if done else None,
            "error": self.error,
            "results": [r.as_dict() for r in self.results],
        }


class Busy(Exception):
    """A drill run is under way already."""


class DrillRuns:
    def __init__(self) -> None:
        self._runs: OrderedDict[str, DrillRun] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, run_id: str) -> DrillRun | None:
        with self._lock:
            return self._runs.get(run_id)

    def latest(self) -> list[DrillRun]:
        with self._lock:
            return list(reversed(self._runs.values()))

    def start(
        self,
        app: Any,
        loop: asyncio.AbstractEventLoop,
        cluster: ClusterSettings,
        kinds: list[str],
        options: Options,
        headers: Mapping[str, str],
    ) -> DrillRun:
        with self._lock:
            if any(r.finished_at is None for r in self._runs.values()):
                raise Busy("a drill run is under way")
            run = DrillRun(f"dr-{secrets.token_hex(6)}", cluster.name, kinds, time.time())
            self._runs[run.id] = run
            while len(self._runs) > KEEP:
                self._runs.popitem(last=False)
        send, close = in_process_send(app, loop, headers)
        thread = threading.Thread(
            target=self._run, args=(run, cluster, options, send, close), name=f"drill-{run.id}", daemon=True
        )
        thread.start()
        return run

    def _run(
        self, run: DrillRun, cluster: ClusterSettings, options: Options, send: Send, close: Callable[[], None]
    ) -> None:
        kafka = DrillKafka(cluster)
        watch = ApiWatch(ApiClient(BASE_URL, None, send), cluster.name)
        try:
            for kind in run.kinds:
                run.results.append(run_drill(SPECS[kind], kafka, watch, options))
        except Exception as exc:  # recorded in the run: a thread has nowhere else to report
            run.error = repr(exc)
        finally:
            kafka.close()
            close()
            run.finished_at = time.time()


def in_process_send(
    app: Any, loop: asyncio.AbstractEventLoop, headers: Mapping[str, str]
) -> tuple[Send, Callable[[], None]]:
    """A :data:`Send` that calls ``app`` on its own event loop (from another thread) with ``headers``
    (the drill's caller's ``Authorization``) added to each request, and what closes its client."""
    import httpx  # here: a service that runs no drill need not hold httpx (service.notify.senders)

    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL, timeout=60)

    def send(
        method: str, url: str, request_headers: Mapping[str, str], body: bytes | None = None
    ) -> tuple[int, Mapping[str, str], bytes]:
        merged = {**request_headers, **headers}
        work = client.request(method, url, headers=merged, content=body)
        response = asyncio.run_coroutine_threadsafe(work, loop).result(90)
        return response.status_code, dict(response.headers), response.content

    def close() -> None:
        with contextlib.suppress(RuntimeError, TimeoutError):  # the app's loop may have stopped
            asyncio.run_coroutine_threadsafe(client.aclose(), loop).result(10)

    return send, close
