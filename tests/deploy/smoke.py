"""Run the built wheel the way the image does: a fresh virtualenv filled from the requirements export, the
project wheel without deps, and the image's exact ENTRYPOINT and ENV, as the unprivileged ``nobody``."""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.deploy.dockerfile import last, stage
from tests.deploy.tools import ROOT
from tests.service.metrics.serving import free_port
from tests.support.daemons import die_with_parent

NOBODY = 65534
IMAGE_CONFIG = "/etc/offsetguard/offsetguard.yaml"
IMAGE_DATA = "/var/lib/offsetguard"


def image_entrypoint() -> list[str]:
    return last(stage("runtime"), "ENTRYPOINT").exec_form()


def image_env() -> dict[str, str]:
    """The runtime stage's ``ENV key=value ...`` pairs."""
    env: dict[str, str] = {}
    for instruction in stage("runtime"):
        if instruction.keyword == "ENV":
            env.update(re.findall(r"(\w+)=(\S+)", instruction.value))
    return env


def image_healthcheck() -> list[str]:
    return last(stage("runtime"), "HEALTHCHECK").exec_form()


def interpreter_for_nobody() -> str:
    """A Python 3.11 that ``nobody`` can run (pyenv builds under /root are not reachable)."""
    for candidate in (os.path.realpath(sys.executable), "/usr/bin/python3.11", "/usr/local/bin/python3.11"):
        if not Path(candidate).exists():
            continue
        try:
            probe = subprocess.run(
                [candidate, "-c", "import sys, venv; assert sys.version_info[:2] == (3, 11)"],
                user=NOBODY,
                group=NOBODY,
                extra_groups=[],
                capture_output=True,
                timeout=30,
            )
        except PermissionError:  # not executable for nobody (a path under /root)
            continue
        if probe.returncode == 0:
            return candidate
    raise AssertionError("no Python 3.11 interpreter usable by nobody")


def build_wheel(out: Path) -> Path:
    """``pip wheel . --no-deps``: the project wheel the image's builder stage builds."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--wheel-dir", str(out), str(ROOT)],
        check=True,
        timeout=600,
    )
    [wheel] = out.glob("offsetguard-*.whl")
    return wheel


def export_requirements(code: str, into: Path) -> Path:
    """The Dockerfile's requirements export, run on the project's pyproject.toml."""
    shutil.copy(ROOT / "pyproject.toml", into / "pyproject.toml")
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=into, capture_output=True, text=True, check=True, timeout=60
    )
    requirements = into / "requirements.txt"
    requirements.write_text(out.stdout)
    return requirements


def fresh_venv(base: Path, wheel: Path, requirements: Path) -> Path:
    """A new virtualenv with the requirements, then the wheel without deps (the image's two layers)."""
    venv = base / "venv"
    subprocess.run([interpreter_for_nobody(), "-m", "venv", str(venv)], check=True, timeout=120)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "-r", str(requirements)], check=True, timeout=900)
    subprocess.run([*pip, "--no-deps", str(wheel)], check=True, timeout=300)
    return venv


@dataclass
class Served:
    base_url: str
    target: str  # host:port for Prometheus
    pid: int
    venv: Path
    data: Path
    env: dict[str, str]
    log: Path


def world_readable_dir(prefix: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    return path


@contextmanager
def serve_as_nobody(venv: Path, base: Path, config_text: str) -> Iterator[Served]:
    """The image's ENTRYPOINT (binary from ``venv``, config file and data dirs under ``base``) as nobody."""
    config = base / "etc" / "offsetguard.yaml"
    config.parent.mkdir(mode=0o755)
    config.write_text(config_text)
    config.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    data = base / "data"
    data.mkdir(mode=0o750)
    os.chown(data, NOBODY, NOBODY)
    port = free_port()
    env = image_env()
    env.update(
        {
            "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
            "HOME": str(data),
            "OFFSETGUARD_HTTP_PORT": str(port),
            "OFFSETGUARD_STORE__PATH": env["OFFSETGUARD_STORE__PATH"].replace(IMAGE_DATA, str(data)),
            "OFFSETGUARD_SNAPSHOTS__DIRECTORY": env["OFFSETGUARD_SNAPSHOTS__DIRECTORY"].replace(
                IMAGE_DATA, str(data)
            ),
        }
    )
    argv = [str(config) if a == IMAGE_CONFIG else a for a in image_entrypoint()]
    argv[0] = str(venv / "bin" / argv[0])
    log_path = base / "serve.log"
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            argv,
            env=env,
            cwd=data,
            user=NOBODY,
            group=NOBODY,
            extra_groups=[],
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent(),
        )
    try:
        yield Served(f"http://127.0.0.1:{port}", f"127.0.0.1:{port}", proc.pid, venv, data, env, log_path)
    finally:
        proc.send_signal(signal.SIGTERM)  # the image's STOPSIGNAL
        try:
            proc.wait(40)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def wait_ready(served: Served, timeout: float = 180.0) -> float:
    """Seconds until ``/readyz`` answered 200."""
    start = time.monotonic()
    last: object = None
    while time.monotonic() - start < timeout:
        assert Path(f"/proc/{served.pid}").exists(), served.log.read_text()[-3000:]
        try:
            with urllib.request.urlopen(f"{served.base_url}/readyz", timeout=5) as response:
                if response.status == 200:
                    return time.monotonic() - start
        except urllib.error.HTTPError as exc:
            last = exc.read()[:500]
        except OSError as exc:
            last = exc
        time.sleep(0.5)
    raise AssertionError(f"/readyz not 200 after {timeout} s: {last}\n{served.log.read_text()[-3000:]}")
