"""``make test`` runs the suite on two pytest-xdist workers (``-n 2 --dist loadgroup``): the suite waits on
Kafka, services and clocks for most of its length (about 43 % of two cores busy when run in one process),
so the tests that need no real component run beside the ones that do.

Every test of a real component started once per session (the ``integration`` marker: the sandbox Kafka,
Spark, the secured and expiry sandboxes) or using one of their session fixtures is in one group: one
worker runs all of them, in their order, with one set of session sandboxes, as a single process would.
The modules marked ``apart`` (real components too, but mostly waiting: a replica frozen for a minute,
offsets expiring, ACLs taking effect; on sandboxes of their own or the 1-node one) and every test using
the secured or the expiry sandbox (so that only one worker starts each) are a second such group, which
the other worker takes (it starts its own 1-node sandbox and SparkSession for them). The
other tests (in-memory fakes, SQLite, the session's PostgreSQL, which each worker starts for itself)
are shared out between the two workers module by module. Without xdist (a plain ``pytest``, or
``make test PYTEST_WORKERS=0``) nothing changes.

xdist's own groups (``xdist_group`` marks) rename the node ids, which pytest 9.2 no longer lets a plugin
do; so here each worker writes the ids of the group's tests to a file when it has collected them, and the
scheduler (:class:`RealGroupScheduling`, for ``--dist loadgroup``) reads it before it shares out work.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

GROUP, APART = "real components", "real components, apart"
# session fixtures of a real component, each owned by one worker (each worker would start its own), and
# the group of their users: the sandboxes only the tests set apart use go with them
_REAL_FIXTURES = {
    "kafka1": GROUP,
    "kafka3": GROUP,
    "spark": GROUP,
    "kafka_sasl": APART,
    "kafka_expiry": APART,
}
_DIR = pytest.StashKey[Path]()
_INPUT = "offsetguard_real_group"  # workerinput key: the directory the workers write the group to


def needs_real(item: pytest.Item) -> bool:
    """Whether ``item`` needs the session's real components (so runs on the worker that owns them)."""
    if item.get_closest_marker("integration") is not None:
        return True
    return not _REAL_FIXTURES.keys().isdisjoint(getattr(item, "fixturenames", ()))


def group(item: pytest.Item) -> str | None:
    """The group ``item`` runs in under xdist (None: any worker): :data:`APART` if marked so or using a
    sandbox of that group's (a test that asks for one by ``request.getfixturevalue`` is marked)."""
    if not needs_real(item):
        return None
    if item.get_closest_marker("apart") is not None:
        return APART
    return APART if APART in map(_REAL_FIXTURES.get, getattr(item, "fixturenames", ())) else GROUP


class RealGroupScheduling(LoadScopeScheduling):
    """xdist's scheduling by scope, the scopes being: the real components' tests (one scope, the largest,
    so given out first), those set apart (one scope), and each other test module."""

    def __init__(self, config: pytest.Config, log: Any = None, *, directory: Path) -> None:
        super().__init__(config, log)
        self._directory = directory
        self._groups: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self._groups is None:  # every worker has collected (and written) by the time work is shared out
            written = [json.loads(p.read_text()) for p in sorted(self._directory.glob("*.json"))]
            self._groups = written[0] if written else {}
        return self._groups.get(nodeid) or nodeid.split("::", 1)[0]


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput") and config.getoption("dist", "no") == "loadgroup":
        config.stash[_DIR] = Path(tempfile.mkdtemp(prefix="offsetguard-xdist-"))


def pytest_unconfigure(config: pytest.Config) -> None:
    if _DIR in config.stash:
        shutil.rmtree(config.stash[_DIR], ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """The controller tells each worker where to write the group's node ids."""
    if _DIR in node.config.stash:
        node.workerinput[_INPUT] = str(node.config.stash[_DIR])


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> RealGroupScheduling | None:
    if _DIR not in config.stash:
        return None
    return RealGroupScheduling(config, log, directory=config.stash[_DIR])


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a worker: write the group of each test that has one, by node id, for the scheduler."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None or _INPUT not in workerinput:
        return
    real = {item.nodeid: name for item in items if (name := group(item)) is not None}
    out = Path(workerinput[_INPUT]) / f"{workerinput['workerid']}.json"
    partial = out.with_suffix(".part")
    partial.write_text(json.dumps(real))
    partial.replace(out)  # whole or not there
