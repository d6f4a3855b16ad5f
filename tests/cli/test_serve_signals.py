"""``serve``'s SIGTERM: uvicorn's graceful stop, then the code after it runs (``serve --sandbox`` stops its
Kafka there). A real uvicorn server in a fresh interpreter, on loopback."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time

import httpx

CODE = """
import sys
import uvicorn
from cli.serve import exit_on_sigterm

async def app(scope, receive, send):
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

exit_on_sigterm()
try:
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_config=None, log_level="warning")
finally:
    print("finally ran", flush=True)
"""


SERVE = """
import asyncio
import sys
from cli.serve import exit_on_sigterm, serve
from service.runtime import Runtime
from service.settings import Settings
from service.state import LatestObservations

settings = Settings(http_port=int(sys.argv[1]))

def runtime_factory(s):
    closers = [lambda: print("closed", flush=True)]
    return Runtime(s, store=None, latest=LatestObservations(), jobs=[], closers=closers)

exit_on_sigterm()
try:
    asyncio.run(serve(settings, runtime_factory))
finally:
    print("finally ran", flush=True)
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _sigterm_when_serving(code: str, path: str = "/") -> tuple[subprocess.Popen[str], str, str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}{path}", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() >= deadline:
                proc.kill()  # before reading its stderr to the end
                raise AssertionError(f"never served {path}: {proc.communicate()[1]}")
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    return proc, out, err


def test_sigterm_after_uvicorn_stops_runs_finally_and_exits_143() -> None:
    proc, out, err = _sigterm_when_serving(CODE)
    assert "finally ran" in out, err
    assert proc.returncode == 143, err


def test_sigterm_serve_stops_the_runtime_once_runs_finally_and_exits_143() -> None:
    """``serve`` runs uvicorn's server on its own loop: the same graceful stop, the runtime closed once."""
    proc, out, err = _sigterm_when_serving(SERVE, "/healthz")
    assert out.split() == ["closed", "finally", "ran"], err
    assert proc.returncode == 143, err
