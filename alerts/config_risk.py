"""``config_risk``: a topic some group consumes can lose or rewind committed data by configuration.

Unclean leader election allowed, replication factor below 3 or min.insync.replicas below 2 on a consumed
topic; ``__consumer_offsets`` replicated fewer than 3 times. One finding per topic, listing the settings.
"""

from __future__ import annotations

from alerts.model import CONFIG_RISK, Finding
from alerts.state import CycleInputs, DetectionState
from alerts.thresholds import Thresholds
from alerts.view import View, view_of
from collectors.model import OFFSETS_TOPIC, TopicConfig


def topic_risks(cfg: TopicConfig) -> list[str]:
    if cfg.topic == OFFSETS_TOPIC:
        return [f"replication.factor={cfg.replication_factor}"] if cfg.replication_factor < 3 else []
    out = []
    if cfg.unclean_leader_election_enable:
        out.append("unclean.leader.election.enable=true")
    if cfg.replication_factor < 3:
        out.append(f"replication.factor={cfg.replication_factor}")
    if cfg.min_insync_replicas < 2:
        out.append(f"min.insync.replicas={cfg.min_insync_replicas}")
    return out


def detect_config_risks(
    previous: DetectionState,
    inputs: CycleInputs,
    now: float,
    thresholds: Thresholds,
    view: View | None = None,
) -> tuple[Finding, ...]:
    if inputs.configs is None:
        return ()
    commits = view_of(view, previous, inputs, thresholds).replayed.commits
    consumers: dict[str, set[str]] = {}
    for k in commits:
        consumers.setdefault(k.topic, set()).add(k.group)
    configs = {c.topic: c for c in inputs.configs.topics}
    if OFFSETS_TOPIC not in configs and inputs.metadata is not None:
        info = inputs.metadata.topic(OFFSETS_TOPIC)
        if info is not None and info.replication_factor < 3:
            configs[OFFSETS_TOPIC] = TopicConfig(
                OFFSETS_TOPIC, None, None, ("compact",), False, 1, info.replication_factor
            )
    findings = []
    for topic, cfg in sorted(configs.items()):
        if topic != OFFSETS_TOPIC and topic not in consumers:
            continue
        risks = topic_risks(cfg)
        if not risks:
            continue
        groups = tuple(sorted(consumers.get(topic, ())))
        findings.append(
            Finding(
                kind=CONFIG_RISK,
                severity="warning",
                cluster=inputs.cluster,
                group=None,
                topic=topic,
                partition=None,
                summary=f"{topic} ({len(groups)} consuming groups) is configured to risk committed data: "
                + ", ".join(risks),
                cause=",".join(r.split("=")[0] for r in risks),
                magnitude={"risks": len(risks), "groups": len(groups)},
                evidence={
                    "settings": tuple(risks),
                    "unclean_leader_election_enable": cfg.unclean_leader_election_enable,
                    "replication_factor": cfg.replication_factor,
                    "min_insync_replicas": cfg.min_insync_replicas,
                    "groups": groups,
                },
            )
        )
    return tuple(findings)
