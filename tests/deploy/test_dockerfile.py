"""The Dockerfile: hadolint clean, the runtime stage runs the service the way the chart expects it, and
the requirements export it builds its dependency layer from is the project's dependency list."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.deploy.dockerfile import DOCKERFILE, instructions, last, requirements_export_code, stage
from tests.deploy.tools import ROOT, hadolint, run


def test_hadolint_dockerfile_no_findings() -> None:
    result = run([hadolint(), "--no-color", "--failure-threshold", "info", str(DOCKERFILE)])
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == ""


def test_hadolint_bad_dockerfile_reported(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python\nRUN apt-get install curl\nCMD offsetguard serve\n")
    result = run([hadolint(), "--no-color", str(bad)])
    assert result.returncode != 0
    assert "DL3006" in result.stdout  # untagged base image


def test_dockerfile_default_target_is_service_runtime() -> None:
    stages = [i.stage for i in instructions() if i.keyword == "FROM"]
    assert stages[-1] == "runtime"
    assert "pipeline" in stages
    assert re.match(r"\$\{PYTHON_IMAGE\} AS runtime", last(stage("runtime"), "FROM").value)
    assert "python:3.11-slim" in next(i.value for i in instructions() if i.keyword == "ARG")


def test_dockerfile_runtime_entrypoint_exec_form_serve_one_config() -> None:
    runtime = stage("runtime")
    assert last(runtime, "ENTRYPOINT").exec_form() == [
        "offsetguard",
        "serve",
        "--config",
        "/etc/offsetguard/offsetguard.yaml",
        "--host",
        "0.0.0.0",
    ]
    assert last(runtime, "STOPSIGNAL").value == "SIGTERM"
    assert last(runtime, "USER").value.split(":")[0] not in {"0", "root"}
    assert not [i for i in runtime if i.keyword == "CMD"]


def test_dockerfile_runtime_volumes_hold_store_and_snapshots() -> None:
    runtime = stage("runtime")
    volumes = last(runtime, "VOLUME").exec_form()
    env = last(runtime, "ENV").value
    store = re.search(r"OFFSETGUARD_STORE__PATH=(\S+)", env)
    snapshots = re.search(r"OFFSETGUARD_SNAPSHOTS__DIRECTORY=(\S+)", env)
    assert store and snapshots
    assert str(Path(store.group(1)).parent) in volumes
    assert snapshots.group(1) in volumes


def test_dockerfile_healthcheck_probes_healthz_without_curl() -> None:
    check = last(stage("runtime"), "HEALTHCHECK")
    command = check.exec_form()  # the array after CMD
    assert " CMD [" in f" {check.value}" and command[:2] == ["python", "-c"]
    assert "/healthz" in command[-1] and "curl" not in check.value


def test_dockerfile_dependencies_installed_before_code_copied() -> None:
    builder = stage("builder")
    keywords = [(i.keyword, i.value) for i in builder]
    deps = next(n for n, (k, v) in enumerate(keywords) if k == "RUN" and "-r requirements.txt" in v)
    first_code = next(n for n, (k, v) in enumerate(keywords) if k == "COPY" and v != "pyproject.toml ./")
    assert deps < first_code
    runtime = [i.value for i in stage("runtime") if i.keyword == "RUN"]
    deps_install = next(n for n, v in enumerate(runtime) if "-r /tmp/requirements.txt" in v)
    wheel_install = next(n for n, v in enumerate(runtime) if "--no-deps /dist/offsetguard-" in v)
    assert deps_install < wheel_install


def test_dockerfile_requirements_export_lists_project_dependencies(tmp_path: Path) -> None:
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    out = subprocess.run(
        [sys.executable, "-c", requirements_export_code()],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert out.stdout.splitlines() == project["dependencies"]


def test_dockerfile_spark_export_same_code_with_spark_extra() -> None:
    spark = [i.value for i in stage("spark-builder") if i.keyword == "RUN" and "tomllib" in i.value]
    builder = [i.value for i in stage("builder") if i.keyword == "RUN" and "tomllib" in i.value]
    code = builder[0].split('" > requirements.txt')[0]
    assert spark[0].startswith(code + '" spark > requirements-spark.txt')
    pipeline = stage("pipeline")
    assert last(pipeline, "ENTRYPOINT").exec_form() == ["offsetguard", "pipeline", "history"]
    assert any("/opt/java/openjdk" in i.value for i in pipeline if i.keyword == "COPY")
    assert "17-jre" in last(stage("jre"), "FROM").value


def test_dockerignore_allow_list_keeps_packages_only() -> None:
    lines = [ln.strip() for ln in (ROOT / ".dockerignore").read_text().splitlines()]
    rules = [ln for ln in lines if ln and not ln.startswith("#")]
    assert rules[0] == "*"
    allowed = {ln[1:].rstrip("/") for ln in rules if ln.startswith("!")}
    copied = {
        i.value.split()[0].rstrip("/")
        for i in stage("builder")
        if i.keyword == "COPY" and not i.value.startswith("--")
    }
    assert copied == allowed
