"""The history job, run unchanged with spark-submit on a real standalone cluster (one master, two
workers on loopback), writes the same tables as the same job in local mode."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.testing import assertDataFrameEqual

from pipeline.job import run_history
from pipeline.options import HistoryOptions
from tests.pipeline.history import write_archive
from tests.pipeline.standalone import HOST, SPARK_HOME, StandaloneCluster, start_standalone

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
ENTRY = REPO / "deploy" / "spark" / "history.py"


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SPARK_HOME", str(SPARK_HOME))
        mp.setenv("SPARK_LOCAL_IP", HOST)
        # Executors are launched by the workers' command builder, which asks this (spark-class's
        # load-spark-env.sh would set it; the workers here start from plain java).
        mp.setenv("SPARK_SCALA_VERSION", "2.13")
        cluster = start_standalone(tmp_path_factory.mktemp("spark-standalone"))
        try:
            yield cluster
        finally:
            cluster.down()


def _py_files(tmp: Path) -> Path:
    """offsetguard's packages as the zip a real cluster gets with --py-files."""
    out = tmp / "offsetguard.zip"
    with zipfile.ZipFile(out, "w") as z:
        for package in ("pipeline", "collectors", "alerts"):
            for path in (REPO / package).rglob("*"):
                if path.is_file() and "__pycache__" not in path.parts:
                    z.write(path, path.relative_to(REPO))
    return out


def test_history_standalone_cluster_equals_local_mode(
    spark: Any, standalone: StandaloneCluster, tmp_path: Path
) -> None:
    archive = tmp_path / "archive"
    write_archive(archive)
    local = run_history(spark, HistoryOptions(source="archive", out=tmp_path / "local", archive=archive))
    env = {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": HOST,
        "PYSPARK_PYTHON": sys.executable,
    }

    done = subprocess.run(
        [
            str(SPARK_HOME / "bin" / "spark-submit"),
            "--master",
            standalone.master_url,
            "--conf",
            "spark.driver.host=" + HOST,
            "--conf",
            "spark.executor.memory=512m",
            "--conf",
            "spark.driver.memory=512m",
            "--conf",
            "spark.sql.shuffle.partitions=4",
            "--conf",
            f"spark.pyspark.python={sys.executable}",
            "--conf",
            "spark.ui.enabled=false",
            "--py-files",
            str(_py_files(tmp_path)),
            str(ENTRY),
            "--source",
            "archive",
            "--archive",
            str(archive),
            "--out",
            str(tmp_path / "cluster"),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        check=False,
    )

    assert done.returncode == 0, done.stderr[-3000:]
    assert "Registering app" in (standalone.directory / "master.log").read_text()
    for table in ("commits", "anomalies", "blast_radius"):
        assertDataFrameEqual(
            spark.read.parquet(str(tmp_path / "cluster" / table)),
            spark.read.parquet(str(tmp_path / "local" / table)),
        )
    # four moves back (g8's and g13's resets after a truncation among them: no log ranges given) and a
    # tombstone while consuming
    assert local["anomalies"] == 5
    assert (tmp_path / "cluster" / "report.md").is_file()
