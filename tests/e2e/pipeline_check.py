"""The pipeline over a replayed incident's archive, against the alerts the online detectors stored.

The e2e runtimes archive every commit the tail sees (``e2e_settings``). After a scenario,
:func:`pipeline_vs_online` reads the module's alerts, stops the runtime (which publishes the archive's
open files), exports the store's log-range changes as the pipeline's ``--ranges`` and runs the whole
history job on the archive. Both sides are reduced to ``(kind, group, topic, partition, magnitude)``
for the kinds the pipeline reports, restricted to the scenario's groups (the runtime tails the shared
sandbox from the start, so its archive also holds other modules' groups).

``committed_below_log_start`` is state-like: the online alert carries the loss at its latest evaluation
(retention goes on deleting while the offset is held), the pipeline the loss at the first range sample
that showed it. They are compared as: same findings, and the pipeline's loss at most the online one (the
log start only moves forward during a hold); the magnitude is then left out of both sets.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pipeline.job import run_history
from pipeline.options import HistoryOptions
from service.commands.pipeline import analysis_settings, export_ranges
from tests.e2e.harness import CLUSTER, RuntimeThread
from tests.pipeline.online import KINDS

Finding = tuple[str, str, str, int, int]
GROWS_WHILE_HELD = "committed_below_log_start"


def pipeline_vs_online(
    runtime: RuntimeThread, spark: Any, groups: Iterable[str], out: Path
) -> tuple[set[Finding], set[Finding]]:
    """(online, pipeline) findings of ``groups``; stops ``runtime``."""
    wanted = set(groups)
    online = {
        (a.kind, a.group, a.topic, a.partition, int(a.magnitude.get(KINDS[a.kind]) or 0))
        for a in runtime.list_alerts()
        if a.kind in KINDS and a.group in wanted and a.topic is not None and a.partition is not None
    }
    runtime.stop()
    settings = runtime.settings
    options = HistoryOptions(
        source="archive",
        out=out / "job",
        archive=settings.archive.directory,
        ranges=export_ranges(settings, out, None, None),  # as --ranges-from-store
        report=False,
        analysis=analysis_settings(settings),
    )
    run_history(spark, options)
    rows = spark.read.parquet(str(out / "job" / "anomalies")).collect()
    found = {
        (r.kind, r.group, r.topic, r.partition, int(r.magnitude or 0))
        for r in rows
        if r.cluster == CLUSTER and r.group in wanted
    }
    return _held_losses_within(online, found)


def _held_losses_within(online: set[Finding], found: set[Finding]) -> tuple[set[Finding], set[Finding]]:
    """Both sets with the held losses' magnitudes set to 0 once each pipeline loss is checked against
    the online loss of the same finding (at most it, and positive)."""
    latest = {f[:4]: f[4] for f in online if f[0] == GROWS_WHILE_HELD}
    for f in found:
        if f[0] == GROWS_WHILE_HELD and f[:4] in latest:
            assert 0 < f[4] <= latest[f[:4]], f"pipeline loss {f} vs online {latest[f[:4]]}"

    def reduced(findings: set[Finding]) -> set[Finding]:
        return {(*f[:4], 0) if f[0] == GROWS_WHILE_HELD else f for f in findings}

    return reduced(online), reduced(found)
