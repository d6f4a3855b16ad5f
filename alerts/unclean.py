"""``unclean_leader_election``: the controller's unclean-election counter rose, or a partition's new
leader was not in its previous ISR.

A preferred-leader election or a rolling restart moves leadership to a replica that *was* in the ISR and
raises nothing. A leader from outside the previous *observed* ISR is ambiguous on its own: the ISR may have
grown and the leader moved between two metadata polls (a broker rejoins after a restart, then a preferred
election moves leadership back to it), and KIP-966 ELR elections are clean too. So:

- with the controller's counter rising or the log end going back it is ``critical``;
- with the counter watched and flat it is ``info`` (an ISR change we did not see). Watched: an earlier
  scrape gave a baseline, a scrape reported it within ``COUNTER_FRESH_SECONDS`` (one that misses the
  restarting controller does not blind the rule), and the metrics collector is not down. A rise that
  the next scrape brings raises the cluster-level ``critical`` finding;
- with no counter to ask (no broker metrics, no baseline, the collector down) it is a ``warning``.
"""

from __future__ import annotations

from alerts.counters import UNCLEAN_ELECTIONS, counter_increases, unclean_counter_seen_at
from alerts.model import UNCLEAN_LEADER_ELECTION, Finding, Severity
from alerts.state import CycleInputs, DetectionState, PartitionKey, PartitionPoint
from alerts.thresholds import Thresholds
from alerts.topic_change import id_changed
from alerts.view import View, view_of


def detect_unclean_elections(
    previous: DetectionState,
    inputs: CycleInputs,
    now: float,
    thresholds: Thresholds,
    view: View | None = None,
) -> tuple[Finding, ...]:
    rises = counter_increases(previous.counters, inputs.metrics, UNCLEAN_ELECTIONS)
    elections = sum(rises.values())
    v = view_of(view, previous, inputs, thresholds)
    commits = v.replayed.commits
    suspects: list[tuple[PartitionKey, PartitionPoint, PartitionPoint, bool]] = []
    waiting = v.unconfirmed
    partitions = v.partitions
    for key in v.shifted:  # the leader changes are among them
        cur = partitions[key]
        old = previous.partitions.get(key)
        if old is None or old.isr is None or old.leader is None or cur.leader is None:
            continue
        if id_changed(old, cur) or key in waiting:
            continue  # a re-created topic's partition has new replicas; or not told yet (alerts.topic_change)
        if cur.leader == old.leader or cur.leader in old.isr:
            continue
        went_back = old.log_end is not None and cur.log_end is not None and cur.log_end < old.log_end
        suspects.append((key, old, cur, went_back))
    suspects.sort(key=lambda s: s[0])  # few: sorted here, not the whole cluster

    findings = []
    counter_flat = bool(suspects) and not elections and _counter_watched(previous, inputs, now)
    for key, old, cur, went_back in suspects:
        severity: Severity = "critical" if elections or went_back else "info" if counter_flat else "warning"
        groups = tuple(sorted({k.group for k in commits if (k.topic, k.partition) == key}))
        findings.append(
            Finding(
                kind=UNCLEAN_LEADER_ELECTION,
                severity=severity,
                cluster=inputs.cluster,
                group=None,
                topic=key.topic,
                partition=key.partition,
                summary=f"{key.topic}[{key.partition}] leader moved {old.leader}->{cur.leader}, outside its "
                f"previous ISR {list(old.isr or ())}; groups with commits: {', '.join(groups) or 'none'}",
                cause="leader_outside_previous_isr" if severity != "info" else "isr_change_between_polls",
                magnitude={"partitions_affected": 1, "groups_affected": len(groups), "elections": elections},
                evidence={
                    "old_leader": old.leader,
                    "new_leader": cur.leader,
                    "old_leader_epoch": old.leader_epoch,
                    "new_leader_epoch": cur.leader_epoch,
                    "old_isr": old.isr,
                    "new_isr": cur.isr,
                    "old_log_end": old.log_end,
                    "new_log_end": cur.log_end,
                    "log_end_went_back": went_back,
                    "unclean_counter_flat": counter_flat,
                    "groups": groups,
                },
            )
        )
    if elections:
        parts = tuple(f"{k.topic}[{k.partition}]" for k, _, _, _ in suspects)
        groups = tuple(
            sorted({c.group for c in commits for k, _, _, _ in suspects if (c.topic, c.partition) == k})
        )
        findings.append(
            Finding(
                kind=UNCLEAN_LEADER_ELECTION,
                severity="critical",
                cluster=inputs.cluster,
                group=None,
                topic=None,
                partition=None,
                summary=f"{elections:g} unclean leader election(s) on the controller; partitions identified: "
                f"{', '.join(parts) or 'unknown (leader and ISR not observed across it)'}",
                cause="controller_counter",
                magnitude={
                    "elections": elections,
                    "partitions_affected": len(parts),
                    "groups_affected": len(groups),
                },
                evidence={
                    "counter_increase_by_broker": tuple(f"{b}={v:g}" for b, v in sorted(rises.items())),
                    "partitions": parts,
                    "groups": groups,
                },
            )
        )
    return tuple(findings)


METRICS_COLLECTOR = "broker_metrics"
# The counter's last sighting counts this long: a scrape that misses the controller (it is restarting, the
# exporter is not up yet) does not blind the rule, a controller gone for longer does.
COUNTER_FRESH_SECONDS = 300.0


def _counter_watched(previous: DetectionState, inputs: CycleInputs, now: float) -> bool:
    """A rise would show: a baseline from an earlier scrape, the counter reported within
    ``COUNTER_FRESH_SECONDS``, and the metrics collector not down."""
    if not any(k.name == UNCLEAN_ELECTIONS for k in previous.counters):
        return False
    seen = unclean_counter_seen_at(previous.unclean_counter_seen_at, inputs.metrics)
    if seen is None or now - seen > COUNTER_FRESH_SECONDS:
        return False
    return all(c.ok for c in inputs.collectors if c.name == METRICS_COLLECTOR)
