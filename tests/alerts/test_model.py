from alerts.model import OFFSET_REWIND, Finding
from alerts.thresholds import Limits, Override, Thresholds


def test_finding_fingerprint_kind_cluster_group_topic_partition() -> None:
    f = Finding(OFFSET_REWIND, "critical", "c", "g", "t", 3, "s", magnitude={"messages_replayed": 1})
    assert f.fingerprint == ("offset_rewind", "c", "g", "t", 3)


def test_thresholds_limits_group_override_beats_topic_beats_default() -> None:
    th = Thresholds(
        default=Limits(lag_messages=100, stall_seconds=60),
        topics={"t": Override(lag_messages=500, stall_seconds=120)},
        groups={"g": Override(lag_messages=None)},
    )
    assert th.limits("g", "t") == Limits(lag_messages=None, stall_seconds=120)
    assert th.limits("h", "t") == Limits(lag_messages=500, stall_seconds=120)
    assert th.limits("h", "u") == Limits(lag_messages=100, stall_seconds=60)
