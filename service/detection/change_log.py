"""The log lines of an evaluation's alert changes: one line each up to :data:`LINES_PER_EVALUATION`, then
one summary of the rest by transition and kind.

A fleet's burst (tens of thousands of lag alerts firing in one evaluation when a backlog passes the
threshold) would otherwise write as many lines, seconds of the service's CPU and a flood in the log
pipeline; the alerts themselves are in ``GET /alerts`` and ``offsetguard_alerts_firing``.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from service.logs import alert_context
from store.alert_records import Alert

log = logging.getLogger("service.detection.loop")

LINES_PER_EVALUATION = 50


def log_changes(
    cluster: str,
    written: Sequence[tuple[Alert, str | None]],
    where: Mapping[str, Any],
    *,
    limit: int = LINES_PER_EVALUATION,
) -> None:
    """Log the alerts of ``written`` that changed (a transition, not None): the first ``limit`` one by one
    (resolved at INFO, the others at WARNING), the rest counted in one WARNING line."""
    rest: Counter[tuple[str, str]] = Counter()
    lines = 0
    for a, transition in written:
        if transition is None:
            continue
        if lines >= limit:
            rest[(transition, a.kind)] += 1
            continue
        lines += 1
        extra = {**alert_context(a), "transition": transition}
        if transition == "resolved":
            log.info("alert %s resolved (%s): %s", a.id, a.resolved_reason, a.summary, extra=extra)
        else:
            log.warning("alert %s %s %s %s: %s", a.id, transition, a.severity, a.kind, a.summary, extra=extra)
    if rest:
        counts = ", ".join(f"{n} {kind} {transition}" for (transition, kind), n in sorted(rest.items()))
        log.warning(
            "detection %s: %d more alert changes in this evaluation, not logged one by one: %s"
            " (GET /alerts lists them)",
            cluster,
            rest.total(),
            counts,
            extra={**where, "unlogged_changes": rest.total()},
        )
