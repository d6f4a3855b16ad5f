"""A small reader of the Dockerfile's instructions (continuation lines joined, comments dropped)."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from tests.deploy.tools import ROOT

DOCKERFILE = ROOT / "Dockerfile"


@dataclass(frozen=True)
class Instruction:
    stage: str  # the name of the FROM ... AS <stage> it belongs to
    keyword: str
    value: str

    def exec_form(self) -> list[str]:
        """The JSON array of an exec-form instruction (raises if it is a shell form)."""
        start = self.value.index("[")
        return list(json.loads(self.value[start:]))


def instructions(path: Path = DOCKERFILE) -> list[Instruction]:
    found: list[Instruction] = []
    stage = ""
    pending = ""
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        text = pending + stripped
        pending = ""
        keyword, _, value = text.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            words = shlex.split(value)
            stage = words[-1] if len(words) >= 3 and words[-2].upper() == "AS" else ""
        found.append(Instruction(stage, keyword, value.strip()))
    return found


def stage(name: str) -> list[Instruction]:
    return [i for i in instructions() if i.stage == name]


def last(items: list[Instruction], keyword: str) -> Instruction:
    return [i for i in items if i.keyword == keyword][-1]


def requirements_export_code() -> str:
    """The Python code of the builder stage's requirements export (``python -c "..." > requirements.txt``)."""
    run = next(i.value for i in stage("builder") if i.keyword == "RUN" and "tomllib" in i.value)
    match = re.match(r'python -c "(.*?)" > requirements\.txt', run)
    assert match, run
    return match.group(1)
