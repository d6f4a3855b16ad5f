"""Real daemons run by the tests: Prometheus and Alertmanager from Debian packages (installed on first
use), and ``offsetguard serve`` itself; each started on a free loopback port with its own files, killed
with the test process, stopped after."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.service.metrics.serving import free_port

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "deploy" / "tools"
PR_SET_PDEATHSIG = 1


def ensure_binary(name: str, installer: str) -> str:
    """Path of ``name``, running ``deploy/tools/<installer>`` first if it is not on PATH."""
    found = shutil.which(name)
    if found is None:
        subprocess.run(["bash", str(TOOLS / installer)], check=True, timeout=900)
        found = shutil.which(name) or (f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None)
        assert found is not None, f"{name} missing after {installer}"
    return found


def die_with_parent() -> Callable[[], None]:
    """A ``preexec_fn``: the child gets SIGKILL when the test process dies."""
    parent = os.getpid()

    def preexec() -> None:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)

    return preexec


def wait_http(proc: subprocess.Popen[bytes], url: str, log_path: Path, *, poll: float = 0.3) -> None:
    """Until ``url`` answers (60 s at most); fails with the end of ``log_path`` if ``proc`` exits first."""
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, f"{proc.args!r} exited: {log_path.read_text()[-3000:]}"
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(poll)


@contextmanager
def running_daemon(argv: Callable[[int], list[str]], log_path: Path, *, poll: float = 0.3) -> Iterator[str]:
    """``argv(port)`` started with its output in ``log_path``; yields ``http://127.0.0.1:<port>`` once
    ``/-/ready`` answers (60 s at most), terminates it when the block ends."""
    port = free_port()
    with log_path.open("ab") as log:
        command = argv(port)
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, preexec_fn=die_with_parent())
    try:
        base = f"http://127.0.0.1:{port}"
        wait_http(proc, f"{base}/-/ready", log_path, poll=poll)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@contextmanager
def offsetguard_serve(
    config: dict[str, object], directory: Path, *, ready_timeout: float = 90.0
) -> Iterator[str]:
    """``offsetguard serve`` as users run it (a process of its own) with ``config`` written to
    ``directory``; yields its base URL once ``/readyz`` answers 200, stops it with SIGINT (as Ctrl-C) when
    the block ends. It dies with the test process."""
    path = directory / "offsetguard.yaml"
    path.write_text(json.dumps(config))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OFFSETGUARD_")}
    log_path = directory / "serve.log"
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cli", "serve", "--config", str(path), "--port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            preexec_fn=die_with_parent(),
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + ready_timeout
        while _status(f"{base}/readyz") != 200:
            assert proc.poll() is None, f"serve exited: {log_path.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"serve not ready: {log_path.read_text()[-3000:]}"
            time.sleep(0.3)
        yield base
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0
