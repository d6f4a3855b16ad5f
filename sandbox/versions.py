"""The Kafka versions the sandbox can run (the version matrix) and where each one's jars live.

The default, 4.1.2, lives in ``deploy/sandbox/lib`` (``make`` resolves it). Every other version is
resolved on first use with Maven into ``deploy/sandbox/versions/<version>/lib`` from its pom: ``pom.xml``
for 4.x (log4j 2), ``pom-3.x.xml`` for 3.x (log4j 1 through reload4j, ZooKeeper among kafka_2.13's
dependencies). ``~/.m2`` keeps the downloads.

Modes: ``kraft`` everywhere; ``zookeeper`` on 3.x only (4.0 removed it). The sandbox's secured modes run
on the default version only.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sandbox import config
from sandbox.config import SandboxError

Mode = Literal["kraft", "zookeeper"]
MODES: tuple[Mode, ...] = ("kraft", "zookeeper")


@dataclass(frozen=True, slots=True)
class KafkaRelease:
    """One Kafka release the sandbox knows how to run."""

    version: str  # e.g. "3.9.1"
    pom: str  # file name under deploy/sandbox
    log4j2: bool  # 4.x logs through log4j 2; 3.x through log4j 1 (reload4j)
    zookeeper: bool  # ZooKeeper mode exists (3.x)

    @property
    def line(self) -> str:
        """``major.minor``, e.g. ``3.9``."""
        return ".".join(self.version.split(".")[:2])

    @property
    def modes(self) -> tuple[Mode, ...]:
        return MODES if self.zookeeper else ("kraft",)

    @property
    def at_least(self) -> tuple[int, int]:
        major, minor = self.line.split(".")
        return int(major), int(minor)


DEFAULT_VERSION = "4.1.2"
RELEASES: dict[str, KafkaRelease] = {
    r.line: r
    for r in (
        KafkaRelease("4.1.2", "pom.xml", log4j2=True, zookeeper=False),
        KafkaRelease("4.0.2", "pom.xml", log4j2=True, zookeeper=False),
        KafkaRelease("3.9.1", "pom-3.x.xml", log4j2=False, zookeeper=True),
        KafkaRelease("3.3.2", "pom-3.x.xml", log4j2=False, zookeeper=True),
    )
}


def release(name: str | None) -> KafkaRelease:
    """The release for ``4.1``, ``4.1.2`` or None (the default); a clear error for any other."""
    wanted = name or DEFAULT_VERSION
    for r in RELEASES.values():
        if wanted in (r.line, r.version):
            return r
    known = ", ".join(f"{r.line} ({r.version})" for r in RELEASES.values())
    raise SandboxError(f"the sandbox cannot run Kafka {wanted!r}; it knows {known}")


def check_mode(r: KafkaRelease, mode: str) -> Mode:
    """``mode`` if ``r`` has it, else a clear error (ZooKeeper mode is gone from 4.0 on)."""
    for m in r.modes:
        if m == mode:
            return m
    raise SandboxError(f"Kafka {r.version} has no {mode} mode (it has {', '.join(r.modes)})")


def lib_dir(home: Path, r: KafkaRelease) -> Path:
    """Where ``r``'s jars live (resolved or not)."""
    if r.version == DEFAULT_VERSION:
        return home / "lib"
    return home / "versions" / r.version / "lib"


def ensure_jars(home: Path, r: KafkaRelease | None = None) -> Path:
    """``r``'s lib directory, resolving it with Maven first if it has no Kafka jar yet."""
    r = r or release(None)
    lib = lib_dir(home, r)
    if any(lib.glob(f"kafka_2.13-{r.version}.jar")):
        return lib
    pom = home / r.pom
    if not pom.is_file():
        raise SandboxError(f"no Kafka {r.version} jars in {lib} and no {pom} to resolve them from")
    cmd = ["mvn", "-q", "-B", "-f", str(pom), f"-Dkafka.version={r.version}", f"-Dsandbox.lib={lib}"]
    try:
        done = subprocess.run(
            [*cmd, "dependency:copy-dependencies"], capture_output=True, text=True, timeout=900, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxError(f"cannot resolve Kafka {r.version} jars with mvn: {exc}") from exc
    if done.returncode != 0:
        raise SandboxError(
            f"mvn dependency:copy-dependencies for Kafka {r.version} failed: {done.stdout[-2000:]}"
        )
    return lib


def log_option(r: KafkaRelease, directory: Path, *, tool: bool) -> str:
    """The JVM flag pointing ``r``'s logging at a config in ``directory`` (written on first use): nodes log
    INFO to stdout (their server.log), tools WARN to stderr."""
    if r.log4j2:
        path = directory / ("log4j2-tools.properties" if tool else "log4j2.properties")
        text, flag = (config.LOG4J2_TOOL if tool else config.LOG4J2_NODE), "-Dlog4j2.configurationFile="
    else:
        path = directory / ("log4j-tools.properties" if tool else "log4j.properties")
        text, flag = (config.LOG4J1_TOOL if tool else config.LOG4J1_NODE), "-Dlog4j.configuration=file:"
    if not path.exists():
        path.write_text(text)
    return f"{flag}{path}"
