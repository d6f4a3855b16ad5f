"""A real Spark standalone cluster on loopback: one master and two workers, started with ``java -cp``
from the PySpark installation's jars (the pip package has no ``sbin`` scripts), small memory.

The JVMs are started through the sandbox's launcher (they die with this process even on SIGKILL) and
:meth:`StandaloneCluster.down` stops exactly those processes.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyspark

from sandbox import jvm
from sandbox.config import free_ports

HOST = "127.0.0.1"
SPARK_HOME = Path(pyspark.__file__).resolve().parent
JVM_OPTS = ("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")


@dataclass
class StandaloneCluster:
    directory: Path
    port: int
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def master_url(self) -> str:
        return f"spark://{HOST}:{self.port}"

    def down(self) -> None:
        for proc in reversed(self.procs):  # workers first, then the master
            jvm.signal_and_wait(proc.pid, "org.apache.spark.deploy", signal.SIGTERM, 20.0, proc)
        self.procs.clear()


def _java(main_class: str, *args: str) -> list[str]:
    return ["java", *JVM_OPTS, "-cp", f"{SPARK_HOME}/jars/*", main_class, *args]


def _wait_port(port: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex((HOST, port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on {HOST}:{port}")


def _wait_registered(log: Path, workers: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        if log.exists() and log.read_text(errors="replace").count("Registering worker") >= workers:
            return
        time.sleep(0.2)
    raise TimeoutError(f"{workers} workers did not register; see {log}")


def start_standalone(directory: Path, workers: int = 2, timeout: float = 90.0) -> StandaloneCluster:
    """Master + ``workers`` workers (1 core, 768 MB each) bound to 127.0.0.1; the caller calls ``down``.

    ``SPARK_HOME`` and ``SPARK_LOCAL_IP`` must be in this process's environment (workers read them).
    """
    assert os.environ.get("SPARK_HOME") == str(SPARK_HOME) and os.environ.get("SPARK_LOCAL_IP") == HOST
    port, ui, *worker_ports = free_ports(2 + 2 * workers)
    cluster = StandaloneCluster(directory, port)
    deadline = time.monotonic() + timeout
    master_log = directory / "master.log"
    try:
        master = _java(
            "org.apache.spark.deploy.master.Master",
            "--host",
            HOST,
            "--port",
            str(port),
            "--webui-port",
            str(ui),
        )
        cluster.procs.append(jvm.spawn(master, master_log, daemon=False))
        _wait_port(port, deadline)
        for i in range(workers):
            work = directory / f"worker-{i}"
            work.mkdir(parents=True, exist_ok=True)
            cmd = _java(
                "org.apache.spark.deploy.worker.Worker",
                "--host", HOST,
                "--port", str(worker_ports[2 * i]),
                "--webui-port", str(worker_ports[2 * i + 1]),
                "--cores", "1",
                "--memory", "768m",
                "--work-dir", str(work),
                cluster.master_url,
            )  # fmt: skip
            cluster.procs.append(jvm.spawn(cmd, directory / f"worker-{i}.log", daemon=False))
        _wait_registered(master_log, workers, deadline)
    except BaseException:
        cluster.down()
        raise
    return cluster
