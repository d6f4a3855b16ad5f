"""Starting, signalling and inspecting the sandbox's JVMs.

Two launch modes:

* in-process (tests, ``serve --sandbox``): the JVM gets ``PR_SET_PDEATHSIG = SIGKILL`` so it dies with
  this process even when the process is SIGKILLed. Linux fires that signal when the *forking thread*
  exits, so every such JVM is forked by one daemon "launcher" thread that lives as long as the process;
  callers may therefore start brokers from any thread (``asyncio.to_thread`` included).
  The signal is set by a fresh interpreter that then execs the JVM (:data:`DEATHSIG_EXEC`), never by a
  ``preexec_fn``: Python code run between fork and exec in a threaded process can deadlock on a lock
  another thread held at the fork (seen: a py4j finalizer logging in the child, the handler lock taken).
* daemon (``offsetguard sandbox up``): a new session and no death signal, so the nodes outlive the CLI.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

PR_SET_PDEATHSIG = 1

NODE_JVM_OPTS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")
TOOL_JVM_OPTS = ("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")


# argv: parent pid, then the command. Exits 1 if the parent died before prctl took effect.
DEATHSIG_EXEC = (
    "import ctypes, os, sys\n"
    f"ctypes.CDLL(None, use_errno=True).prctl({PR_SET_PDEATHSIG}, {int(signal.SIGKILL)})\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    os._exit(1)\n"
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)


def dies_with_parent(cmd: Sequence[str]) -> list[str]:
    """``cmd`` run so that it gets SIGKILL when this process (strictly: the forking thread) goes."""
    return [sys.executable, "-I", "-S", "-c", DEATHSIG_EXEC, str(os.getpid()), *cmd]


def java_command(lib: Path, main_class: str, args: Sequence[str], jvm_opts: Sequence[str]) -> list[str]:
    """``java <opts> -cp lib/* <main_class> <args>``."""
    return ["java", *jvm_opts, "-cp", f"{lib}/*", main_class, *args]


_launch_queue: queue.SimpleQueue[tuple[Callable[[], subprocess.Popen[bytes]], Future[Any]]] = (
    queue.SimpleQueue()
)
_launcher_lock = threading.Lock()
_launcher: threading.Thread | None = None


def _launch_forever() -> None:
    while True:
        fn, future = _launch_queue.get()
        try:
            future.set_result(fn())
        except BaseException as exc:
            future.set_exception(exc)


def _in_launcher_thread(fn: Callable[[], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    global _launcher
    with _launcher_lock:
        if _launcher is None or not _launcher.is_alive():
            _launcher = threading.Thread(target=_launch_forever, name="sandbox-jvm-launcher", daemon=True)
            _launcher.start()
    future: Future[subprocess.Popen[bytes]] = Future()
    _launch_queue.put((fn, future))
    return future.result()


def spawn(cmd: Sequence[str], log_path: Path, *, daemon: bool) -> subprocess.Popen[bytes]:
    """Start ``cmd`` with stdout and stderr appended to ``log_path``."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    if not daemon:
        return _in_launcher_thread(lambda: _spawn(cmd, log_path, daemon=False))
    return _spawn(cmd, log_path, daemon=True)


def _spawn(cmd: Sequence[str], log_path: Path, *, daemon: bool) -> subprocess.Popen[bytes]:
    with open(log_path, "ab") as log:
        if daemon:
            return subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        return subprocess.Popen(
            dies_with_parent(cmd), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
        )


def run(
    cmd: Sequence[str], *, timeout: float, input: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a short-lived JVM to completion (killed with its parent, and on timeout)."""
    return subprocess.run(
        dies_with_parent(cmd),
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
        stdin=None if input is not None else subprocess.DEVNULL,
    )


EXEC_SETTLE = (0.0, 0.01, 0.05, 0.2)  # re-reads of an empty command line: a process in mid-exec


def _proc_view(pid: int) -> tuple[str, str] | None:
    """(state letter, command line) of ``pid`` from ``/proc``; None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[0], cmdline


def pid_alive(pid: int | None, marker: str, proc: subprocess.Popen[bytes] | None = None) -> bool:
    """True if ``pid`` runs (not a zombie) and its command line contains ``marker`` (guards PID reuse).

    With ``proc`` (our own child, so the pid cannot be reused before it is reaped) the child's exit status
    decides. Otherwise ``/proc`` does, and an empty command line is read again before it counts: the
    kernel shows one while a process is in the middle of ``execve`` (our launcher execs the JVM), and
    taking that for "gone" reported a starting broker as exited (the 60-minute soak, a CI run).
    """
    if not pid:
        return False
    if proc is not None and proc.pid == pid:
        return proc.poll() is None
    for pause in EXEC_SETTLE:
        time.sleep(pause)
        view = _proc_view(pid)
        if view is None or view[0] in ("Z", "X"):
            return False
        if view[1]:
            return marker in view[1]
    return False  # a kernel thread, or a process that never finishes its exec: not ours


def signal_and_wait(
    pid: int,
    marker: str,
    sig: signal.Signals,
    timeout: float,
    proc: subprocess.Popen[bytes] | None = None,
) -> bool:
    """Send ``sig`` and wait up to ``timeout`` s for the process to go; SIGKILL after that. True if gone."""
    if not pid_alive(pid, marker, proc):
        return True
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return True
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid, marker, proc):  # with proc, this also reaps our own child
            return True
        time.sleep(0.1)
    if sig != signal.SIGKILL:
        return signal_and_wait(pid, marker, signal.SIGKILL, 10.0, proc)
    return False
