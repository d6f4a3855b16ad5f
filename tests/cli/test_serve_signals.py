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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_sigterm_after_uvicorn_stops_runs_finally_and_exits_143() -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", CODE, str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr and proc.stderr.read()
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert "finally ran" in out, err
    assert proc.returncode == 143, err
