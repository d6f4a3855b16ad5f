from alerts.config_risk import detect_config_risks
from alerts.model import CONFIG_RISK
from alerts.state import DetectionState
from collectors.model import ConfigsObservation, TopicConfig
from tests.alerts.builders import TH, C, T, committed, inputs, metadata


def _cfg(topic: str = T, unclean: bool = False, rf: int = 3, min_isr: int = 2) -> TopicConfig:
    return TopicConfig(topic, 1000, None, ("delete",), unclean, min_isr, rf)


def _run(*cfgs: TopicConfig, **kw: object) -> list:
    inp = inputs(configs=ConfigsObservation(C, 0, cfgs), committed=committed(0, {("g", T, 0): 1}), **kw)
    return list(detect_config_risks(DetectionState(), inp, 0, TH))


def test_detect_config_risks_consumed_topic_unsafe_settings_listed() -> None:
    [f] = _run(_cfg(unclean=True, rf=2, min_isr=1))
    assert (f.kind, f.severity, f.topic) == (CONFIG_RISK, "warning", T)
    assert f.evidence["settings"] == (
        "unclean.leader.election.enable=true",
        "replication.factor=2",
        "min.insync.replicas=1",
    )
    assert f.evidence["groups"] == ("g",)


def test_detect_config_risks_safe_topic_nothing() -> None:
    assert _run(_cfg()) == []


def test_detect_config_risks_unconsumed_topic_nothing() -> None:
    assert _run(_cfg(topic="other", rf=1)) == []


def test_detect_config_risks_offsets_topic_replication_below_three_from_metadata() -> None:
    [f] = _run(_cfg(), metadata=metadata(0, {("__consumer_offsets", 0): (1, 0, (1,))}, replicas=(1,)))
    assert (f.topic, f.evidence["settings"]) == ("__consumer_offsets", ("replication.factor=1",))


def test_detect_config_risks_offsets_topic_replicated_three_times_nothing() -> None:
    assert _run(_cfg(), metadata=metadata(0, {("__consumer_offsets", 0): (1, 0, (1, 2, 3))})) == []
