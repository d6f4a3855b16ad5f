"""The render worker: a long-lived child process that turns a compact snapshot into the exposition.

Rendering 100,000+ series holds a GIL for seconds; in the API process that stalls every request. The
worker has its own interpreter, so the API process only builds the compact snapshot
(:func:`service.metrics.snapshot.compact`), pickles it, and waits on the pipe (which releases the GIL).

The worker is a fresh interpreter (``subprocess``: no fork of a process running threads and an event
loop, and none of ``multiprocessing``'s spawn machinery, whose resource-tracker process alone cost 13 MB
resident) talking over a socket pair with ``multiprocessing.connection`` framing; it never opens the
store or Kafka: everything it reads arrives in the snapshot. It exits when the parent's end closes (the
parent stopped it, or died). One request at a time: :class:`RenderWorker` is used from the single
metrics thread.
"""

from __future__ import annotations

import logging
import os
import pickle
import socket
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection
from typing import Any

from service.memory import tune_gc
from service.metrics.collector import build_registry
from service.metrics.expansion import expand
from service.metrics.exposition import Rendered, render
from service.metrics.options import MetricsOptions

log = logging.getLogger(__name__)

START_TIMEOUT_S = 60.0  # the child imports prometheus_client and the model before answering
RENDER_TIMEOUT_S = 120.0  # a render that takes longer is abandoned (worker killed, in-process render)


_CHILD = "import sys; from service.metrics.worker import main; main(int(sys.argv[1]), float(sys.argv[2]))"


class WorkerError(RuntimeError):
    """The worker failed, died or timed out; the caller renders in process instead."""


def render_inputs(
    inputs: Any,
    now: float,
    accept: str | None,
    accept_encoding: str | None,
    options: MetricsOptions | None = None,
) -> Rendered:
    """What the worker does with one request's expanded snapshot (:func:`service.metrics.expansion.expand`):
    the registry the app factory builds, pinned to it."""
    registry = build_registry(lambda: inputs, clock=lambda: now, options=options)
    return render(registry, inputs, accept=accept, accept_encoding=accept_encoding)


def main(fd: int, delay_s: float) -> None:
    """The child's entry point: serve requests on the inherited socket ``fd``."""
    _serve(Connection(fd), delay_s)


def _serve(conn: Connection, delay_s: float) -> None:
    """The child's main loop: (accept, accept_encoding, options, snapshot) in, (ok, payload) out, until
    EOF."""
    tune_gc()  # the parent's thresholds (inherited through the environment)
    conn.send_bytes(b"ready")
    while True:
        try:
            reply = _answer(conn, delay_s)
            conn.send_bytes(reply)
        except (EOFError, OSError):
            return
        del reply  # nothing of one render is held while the next request arrives


def _answer(conn: Connection, delay_s: float) -> bytes:
    """Receive one request and render it: the pickled reply. Each stage's input is dropped as soon as it
    is read (the request once unpickled, the snapshot once expanded), so a render holds one of them at a
    time beside its output. Raises ``EOFError``/``OSError`` when the parent is gone."""
    request = conn.recv_bytes()
    try:
        accept, accept_encoding, options, snapshot = pickle.loads(request)
        del request
        if delay_s > 0:  # test knob: a slow render, busy in *this* process's interpreter
            until = time.monotonic() + delay_s
            while time.monotonic() < until:
                pass
        inputs, now = expand(snapshot)
        del snapshot  # the observations' pickled bytes, now unpacked
        out = render_inputs(inputs, now, accept, accept_encoding, options)
        reply: tuple[Any, ...] = (True, out.body, out.content_type, out.content_encoding)
    except Exception as exc:  # reported to the parent, which falls back for this scrape
        reply = (False, f"{type(exc).__name__}: {exc}")
    return pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)


class RenderWorker:
    """The parent's handle on one worker process (started on first use, restarted if it died)."""

    def __init__(self, *, delay_s: float = 0.0, render_timeout_s: float = RENDER_TIMEOUT_S) -> None:
        self.delay_s = delay_s
        self.render_timeout_s = render_timeout_s
        self.busy = threading.Event()  # set while a request is with the worker
        self.starts = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._closed = False

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def render(
        self,
        snapshot: Any,
        accept: str | None,
        accept_encoding: str | None,
        options: MetricsOptions | None = None,
    ) -> Rendered:
        """Blocking; call from the metrics thread. Raises :class:`WorkerError` on any failure (the worker
        is then stopped; the next call starts a new one)."""
        request = pickle.dumps((accept, accept_encoding, options, snapshot), protocol=pickle.HIGHEST_PROTOCOL)
        conn = self._ensure()
        self.busy.set()
        try:
            conn.send_bytes(request)
            if not conn.poll(self.render_timeout_s):  # waits without the GIL
                raise WorkerError(f"no answer within {self.render_timeout_s:.0f} s")
            reply = pickle.loads(conn.recv_bytes())
        except WorkerError:
            self._stop()
            raise
        except (EOFError, OSError, pickle.PickleError) as exc:
            self._stop()
            raise WorkerError(f"worker lost: {type(exc).__name__}: {exc}") from exc
        finally:
            self.busy.clear()
        if not reply[0]:
            raise WorkerError(f"worker render failed: {reply[1]}")
        _, body, content_type, content_encoding = reply
        return Rendered(body, content_type, content_encoding)

    def start(self) -> None:
        """Start the worker now if it is not running (blocking: up to :data:`START_TIMEOUT_S`); raises
        :class:`WorkerError` if it does not start."""
        self._ensure()

    def _ensure(self) -> Connection:
        if self._closed:
            raise WorkerError("closed")
        if self._process is not None and self._conn is not None and self._process.poll() is None:
            return self._conn
        self._stop()
        ours, theirs = socket.socketpair()
        try:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    _CHILD,
                    str(theirs.fileno()),
                    repr(self.delay_s),
                ],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},  # as ours
            )
        except OSError as exc:
            ours.close()
            raise WorkerError(f"worker did not start: {exc}") from exc
        finally:
            theirs.close()
        parent = Connection(ours.detach())
        self._process, self._conn = process, parent
        self.starts += 1
        try:
            if not parent.poll(START_TIMEOUT_S) or parent.recv_bytes() != b"ready":
                raise WorkerError("worker did not start")
        except (EOFError, OSError) as exc:
            self._stop()
            raise WorkerError(f"worker did not start: {exc}") from exc
        except WorkerError:
            self._stop()
            raise
        if self._closed:  # closed while it started
            self._stop()
            raise WorkerError("closed")
        log.info("metrics: render worker started (pid %s)", process.pid)
        return parent

    def _stop(self) -> None:
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if conn is not None:
            conn.close()  # the worker sees EOF and exits
        if process is not None:
            try:
                process.wait(2.0)
            except subprocess.TimeoutExpired:
                process.kill()
                try:
                    process.wait(2.0)
                except subprocess.TimeoutExpired:
                    log.warning("metrics: render worker (pid %s) did not exit after kill", process.pid)

    def close(self) -> None:
        """Stop the worker (any thread); a render under way and later ones raise :class:`WorkerError`."""
        self._closed = True
        process = self._process
        if process is not None and self.busy.is_set():
            process.kill()  # the metrics thread waiting on the pipe sees EOF at once
        self._stop()
