"""Detectors stay pure: nothing under alerts/ imports Kafka, a clock, HTTP, Prometheus or SQLite."""

import ast
from pathlib import Path

import alerts

FORBIDDEN = (
    "kafka",
    "aiokafka",
    "time",
    "datetime",
    "asyncio",
    "socket",
    "http",
    "urllib",
    "requests",
    "httpx",
    "prometheus_client",
    "sqlite3",
    "fastapi",
    "service",
    "apscheduler",
    "random",
)
# the data the detectors read, and the pure class decorator that builds some of it (collectors/fast_init.py)
ALLOWED_PROJECT = ("collectors.model", "collectors.codec", "collectors.fast_init")


def forbidden_imports(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            root = name.split(".")[0]
            if root in FORBIDDEN or (root == "collectors" and not name.startswith(ALLOWED_PROJECT)):
                found.append(name)
    return found


def test_forbidden_imports_scan_catches_clock_kafka_and_io_collectors() -> None:
    src = "\n".join(
        (
            "import time",
            "from kafka import KafkaAdminClient",
            "from collectors.broker_metrics import X",
            "import json",
        )
    )
    assert forbidden_imports(src) == ["time", "kafka", "collectors.broker_metrics"]


def test_alerts_modules_import_nothing_impure() -> None:
    files = sorted(Path(alerts.__file__).parent.rglob("*.py"))
    assert len(files) > 10
    offenders = {f.name: forbidden_imports(f.read_text()) for f in files}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_alerts_modules_stay_small() -> None:
    sizes = {f.name: len(f.read_text().splitlines()) for f in Path(alerts.__file__).parent.rglob("*.py")}
    assert {k: v for k, v in sizes.items() if v >= 300} == {}
