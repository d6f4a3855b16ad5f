"""``--module-order``: run the test modules in reverse or shuffled order, to prove they do not depend on
each other (a shared sandbox, shared alert budgets, what another module left behind).

    pytest --module-order=reverse
    pytest --module-order=random          # a seed is chosen and printed
    pytest --module-order=random:1234     # that order again

Tests inside a module keep their order: a module's scenarios may share one incident fixture, and the
pipeline-vs-online checks run last in theirs (they stop the module's runtime).
"""

from __future__ import annotations

import random

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--module-order",
        default="as-written",
        help="as-written (default), reverse, random or random:SEED: the order test modules run in",
    )


def module_order(paths: list[str], how: str) -> tuple[list[str], int | None]:
    """``paths`` (distinct, in collection order) reordered as ``how`` says, and the seed used if random."""
    if how == "as-written":
        return list(paths), None
    if how == "reverse":
        return list(reversed(paths)), None
    name, _, seed_text = how.partition(":")
    if name != "random":
        raise pytest.UsageError(f"--module-order: {how!r} is not as-written, reverse, random or random:SEED")
    try:
        seed = int(seed_text) if seed_text else random.SystemRandom().randrange(1 << 30)
    except ValueError:
        raise pytest.UsageError(f"--module-order: seed {seed_text!r} is not an integer") from None
    shuffled = list(paths)
    random.Random(seed).shuffle(shuffled)
    return shuffled, seed


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    how = str(config.getoption("--module-order"))
    if how == "as-written":
        return
    by_module: dict[str, list[pytest.Item]] = {}
    for item in items:
        by_module.setdefault(str(item.path), []).append(item)
    order, seed = module_order(list(by_module), how)
    items[:] = [item for path in order for item in by_module[path]]
    if seed is not None:
        config.stash[_SEED] = seed


_SEED = pytest.StashKey[int]()


def pytest_report_header(config: pytest.Config) -> str | None:
    how = str(config.getoption("--module-order"))
    return None if how == "as-written" else f"module order: {how}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    seed = config.stash.get(_SEED, None)
    if seed is not None:
        terminalreporter.write_line(f"module order: random:{seed} (pass it again to repeat this order)")
