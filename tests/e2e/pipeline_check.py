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

``offset_skip``'s deleted-unread part counts the log start sampled up to the move. The online detector
evaluates a tail-seen skip at once, with the samples it has received by then; a collection stamped (at its
start) before the commit but answered after that evaluation is not among them, while the pipeline has
every sample by its stamp. So the pipeline's figure is at least the online one (the same when no
collection was in flight, the usual case); compared as such, then left out of both sets.

The upper bounds of a reset whose direction the commits cannot tell (``messages_skipped_max``,
``messages_replayed_max``) are compared where both sides derive them from the same samples: the moves
back from beyond a truncated log end (``log_end_after_truncation``: the first sample showing the
truncation, a change the exported ranges hold). Bounds from below the log start depend on which samples
preceded the reset, and are left to the unit-level replay (tests/pipeline/test_replay.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cli.pipeline import analysis_settings, export_ranges
from pipeline.job import run_history
from pipeline.options import HistoryOptions
from tests.e2e.harness import CLUSTER, RuntimeThread
from tests.pipeline.online import KINDS

Finding = tuple[str, str, str, int, int]
Key = tuple[str, str, str, int]
GROWS_WHILE_HELD = "committed_below_log_start"
BOUNDS = ("messages_skipped_max", "messages_replayed_max")


def pipeline_vs_online(
    runtime: RuntimeThread, spark: Any, groups: Iterable[str], out: Path
) -> tuple[set[Finding], set[Finding]]:
    """(online, pipeline) findings of ``groups``; stops ``runtime``."""
    wanted = set(groups)
    online: set[Finding] = set()
    skips_from_below: set[Key] = set()
    bounds: dict[Key, tuple[object, ...]] = {}
    for a in runtime.list_alerts():
        if a.kind not in KINDS or a.group not in wanted or a.topic is None or a.partition is None:
            continue
        online.add((a.kind, a.group, a.topic, a.partition, int(a.magnitude.get(KINDS[a.kind]) or 0)))
        if a.kind == "offset_skip" and a.evidence.get("old_offset_was") == "below_log_start":
            skips_from_below.add((a.kind, a.group, a.topic, a.partition))
        if "log_end_after_truncation" in a.evidence:
            bounds[(a.kind, a.group, a.topic, a.partition)] = tuple(a.magnitude.get(b) for b in BOUNDS)
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
    mine = [r for r in rows if r.cluster == CLUSTER and r.group in wanted]
    found = {(r.kind, r.group, r.topic, r.partition, int(r.magnitude or 0)) for r in mine}
    pipeline_bounds = {(r.kind, r.group, r.topic, r.partition): tuple(r[b] for b in BOUNDS) for r in mine}
    for key, want in bounds.items():
        assert pipeline_bounds.get(key) == want, (
            f"bounds of {key}: pipeline {pipeline_bounds.get(key)}, online {want}"
        )
    return _bounded_magnitudes(online, found, skips_from_below)


def _bounded_magnitudes(
    online: set[Finding], found: set[Finding], at_least: set[Key]
) -> tuple[set[Finding], set[Finding]]:
    """Both sets with the magnitudes of held losses and of ``at_least`` findings set to 0, once each
    pipeline figure is checked against the online one of the same finding: a held loss at most it (and
    positive), an ``at_least`` finding (a skip from below the log start) at least it."""
    bounded = {f[:4] for f in online if f[0] == GROWS_WHILE_HELD} | at_least
    by_key = {f[:4]: f[4] for f in online if f[:4] in bounded}
    for f in found:
        if f[:4] not in by_key:
            continue
        if f[0] == GROWS_WHILE_HELD:
            assert 0 < f[4] <= by_key[f[:4]], f"pipeline loss {f} vs online {by_key[f[:4]]}"
        else:
            assert f[4] >= by_key[f[:4]], f"pipeline skip {f} vs online {by_key[f[:4]]}"

    def reduced(findings: set[Finding]) -> set[Finding]:
        return {(*f[:4], 0) if f[:4] in bounded else f for f in findings}

    return reduced(online), reduced(found)
