"""Render offsetguard.yaml for the pod: every ``{fromEnv: NAME}`` becomes the value of variable ``NAME``.

Run by the chart's init container: ``python render-config.py TEMPLATE OUTPUT``. Secrets (SASL passwords,
API tokens, receiver headers) reach it as environment variables from ``secretKeyRef``; the output (mode
0600) lives on a memory-backed emptyDir and is what ``offsetguard serve --config`` reads.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import yaml


class MissingVariable(Exception):
    """A ``fromEnv`` placeholder names a variable that is not set."""

    def __init__(self, path: str, name: str) -> None:
        super().__init__(f"{path}: environment variable {name} is not set")
        self.path = path
        self.name = name


def resolve(node: Any, environ: dict[str, str], path: str = "config") -> Any:
    """``node`` with each ``{fromEnv: NAME}`` mapping replaced by ``environ[NAME]``."""
    if isinstance(node, dict):
        if set(node) == {"fromEnv"}:
            name = str(node["fromEnv"])
            if name not in environ:
                raise MissingVariable(path, name)
            return environ[name]
        return {key: resolve(value, environ, f"{path}.{key}") for key, value in node.items()}
    if isinstance(node, list):
        return [resolve(value, environ, f"{path}[{i}]") for i, value in enumerate(node)]
    return node


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: render-config.py TEMPLATE OUTPUT", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as template:
        data = yaml.safe_load(template) or {}
    try:
        rendered = resolve(data, dict(os.environ))
    except MissingVariable as exc:
        print(f"render-config: {exc}", file=sys.stderr)
        return 1
    fd = os.open(argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as output:
        yaml.safe_dump(rendered, output, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
