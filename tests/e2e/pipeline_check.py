"""The pipeline over a replayed incident's archive, against the alerts the online detectors stored.

The e2e runtimes archive every commit the tail sees (``e2e_settings``). After a scenario,
:func:`pipeline_vs_online` reads the module's alerts, stops the runtime (which publishes the archive's
open files), exports the store's log-range changes as the pipeline's ``--ranges`` and runs the whole
history job on the archive. Both sides are reduced to ``(kind, group, topic, partition, magnitude)``
for the kinds the pipeline reports, restricted to the scenario's groups (the runtime tails the shared
sandbox from the start, so its archive also holds other modules' groups).
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
    return online, found
