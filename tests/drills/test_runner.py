"""The drill runner's judgement, waits and cleanup, over an in-memory service API and Kafka (the drills'
own seams); the real drills run on the sandbox in ``integration/test_drills.py``."""

from __future__ import annotations

import time
from typing import Any

import pytest

from collectors.settings import ClusterSettings
from drills.kafka_io import DrillError, DrillKafka
from drills.model import Caused
from drills.runner import Names, Options, Spec, run_drill

FAST = Options(timeout_s=1.0, notify_timeout_s=1.0, notify_grace_s=0.0, quiet_s=0.5)
NAMES = Names("offsetguard-drill-x-1", "offsetguard-drill-x-1")


class FakeWatch:
    """The service's API as the runner reads it: alerts appear when :meth:`fire` is called."""

    cluster = "c1"

    def __init__(self) -> None:
        self.listed: list[dict[str, Any]] = []
        self.notifications: list[dict[str, Any]] = []
        self.acks: list[tuple[str, str]] = []
        self.ack_error: Exception | None = None

    def fire(self, **fields: Any) -> None:
        alert = {
            "id": "al-1",
            "kind": "offset_rewind",
            "severity": "critical",
            "cause": "unknown",
            "magnitude": {"messages_replayed": 100},
            "drill": True,
            **fields,
        }
        self.listed.insert(0, alert)

    def alerts(self, group: str) -> list[dict[str, Any]]:
        assert group == NAMES.group
        return list(self.listed)

    def alert(self, alert_id: str) -> dict[str, Any]:
        return {"id": alert_id, "notifications": self.notifications}

    def committed(self, group: str, topic: str, partition: int) -> int | None:
        return None

    def partition(self, topic: str, partition: int) -> dict[str, Any] | None:
        return None

    def group(self, group: str) -> dict[str, Any] | None:
        return None

    def ack(self, alert_id: str, comment: str) -> None:
        if self.ack_error is not None:
            raise self.ack_error
        self.acks.append((alert_id, comment))


class FakeKafka:
    def __init__(self, problems: list[str] | None = None) -> None:
        self.removed: list[tuple[str, str]] = []
        self._problems = problems or []

    def remove(self, group: str, topic: str) -> list[str]:
        self.removed.append((group, topic))
        return self._problems


def spec(act: Any, **kw: Any) -> Spec:
    base: dict[str, Any] = {
        "name": "x",
        "alert_kind": "offset_rewind",
        "severities": frozenset({"critical"}),
        "summary": "test",
        "act": act,
    }
    return Spec(**{**base, **kw})


def firing(watch: FakeWatch, **fields: Any) -> Any:
    def act(kafka: Any, w: Any, names: Names, options: Options) -> Caused:
        watch.fire(**fields)
        return Caused(time.monotonic(), {"messages_replayed": 100})

    return act


def run(s: Spec, watch: FakeWatch, kafka: FakeKafka | None = None, options: Options = FAST) -> Any:
    return run_drill(s, kafka or FakeKafka(), watch, options, NAMES)  # type: ignore[arg-type]


def test_expected_alert_passes_acked_as_a_drill_and_cleaned_up() -> None:
    watch, kafka = FakeWatch(), FakeKafka()
    result = run(spec(firing(watch)), watch, kafka)
    assert (result.passed, result.detail, result.seen_kind, result.seen_severity) == (
        True,
        "as expected",
        "offset_rewind",
        "critical",
    )
    assert result.detection_latency_s is not None and 0 <= result.detection_latency_s < 1
    assert (result.notification, result.acknowledged) == ("none queued", "yes")
    assert watch.acks == [("al-1", "offsetguard drill x: PASS")]
    assert kafka.removed == [(NAMES.group, NAMES.topic)]
    assert result.as_dict()["result"] == "PASS"


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"severity": "warning"}, "severity warning, expected critical"),
        ({"magnitude": {"messages_replayed": 99}}, "messages_replayed 99, expected 100"),
        ({"drill": False}, "not marked as a drill"),
    ],
)
def test_wrong_severity_magnitude_or_unmarked_alert_fails_saying_what(
    fields: dict[str, Any], why: str
) -> None:
    watch = FakeWatch()
    result = run(spec(firing(watch, **fields)), watch)
    assert not result.passed
    assert why in result.detail
    assert watch.acks == [("al-1", "offsetguard drill x: FAIL")]


def test_no_alert_fails_after_timeout_and_still_cleans_up() -> None:
    watch, kafka = FakeWatch(), FakeKafka()

    def quiet(*_: Any) -> Caused:
        return Caused(time.monotonic(), {})

    started = time.monotonic()
    result = run(spec(quiet), watch, kafka)
    assert (result.passed, result.detail) == (False, "no offset_rewind alert within 1 s")
    assert 1.0 <= time.monotonic() - started < 3
    assert kafka.removed == [(NAMES.group, NAMES.topic)]


def test_other_kinds_and_causes_of_the_group_do_not_count() -> None:
    watch = FakeWatch()
    result = run(spec(firing(watch, kind="offsets_lost")), watch)
    assert not result.passed
    watch = FakeWatch()
    result = run(spec(firing(watch, cause="auto_reset_earliest"), cause="auto_reset_latest"), watch)
    assert (result.passed, result.detail) == (False, "no offset_rewind alert within 1 s")


def test_a_failed_action_is_a_failed_drill_with_its_error_and_cleanup_runs() -> None:
    watch, kafka = FakeWatch(), FakeKafka(problems=["delete topic t: denied"])

    def broken(*_: Any) -> Caused:
        raise DrillError("create offsetguard-drill-x-1: TopicAuthorizationFailedError")

    result = run(spec(broken), watch, kafka)
    assert (result.passed, result.detail) == (
        False,
        "create offsetguard-drill-x-1: TopicAuthorizationFailedError",
    )
    assert result.cleanup == "delete topic t: denied"


def test_ack_refused_keeps_the_verdict_and_says_why() -> None:
    from service.api.client import ApiClientError

    watch = FakeWatch()
    watch.ack_error = ApiClientError("needs a write token (HTTP 401 unauthorized)", status=401)
    result = run(spec(firing(watch)), watch)
    assert result.passed
    assert result.acknowledged == "no: needs a write token (HTTP 401 unauthorized)"


def test_notifications_delivered_to_every_receiver_pass_with_latency() -> None:
    watch = FakeWatch()
    watch.notifications = [
        {"receiver": "pager", "event": "firing", "state": "delivered", "last_error": None},
        {"receiver": "chat", "event": "firing", "state": "delivered", "last_error": None},
    ]
    result = run(spec(firing(watch)), watch)
    assert (result.passed, result.notification) == (True, "delivered")
    assert result.notification_latency_s is not None


def test_notification_not_delivered_in_time_fails_with_receiver_states() -> None:
    watch = FakeWatch()
    watch.notifications = [
        {"receiver": "pager", "event": "firing", "state": "delivered", "last_error": None},
        {"receiver": "chat", "event": "firing", "state": "pending", "last_error": "HTTP 503"},
    ]
    result = run(spec(firing(watch)), watch)
    assert not result.passed
    assert (
        "notification not delivered in 1 s: pager: delivered (no error), chat: pending (HTTP 503)"
        in result.detail
    )


def moved(*_: Any) -> Caused:
    return Caused(time.monotonic(), {"coordinator_before": 1, "coordinator_after": 2}, seen_in=0.7)


def test_expected_quiet_passes_after_quiet_period_with_what_it_saw() -> None:
    watch, kafka = FakeWatch(), FakeKafka()
    started = time.monotonic()
    result = run(spec(moved, alert_kind=None, severities=frozenset()), watch, kafka)
    assert 0.5 <= time.monotonic() - started < 2
    assert (result.expected, result.passed, result.detail, result.seen_kind) == (
        "none",
        True,
        "no alert in 0.5 s",
        None,
    )
    assert (result.magnitude, result.detection_latency_s) == (
        {"coordinator_before": 1, "coordinator_after": 2},
        0.7,
    )
    assert watch.acks == [] and kafka.removed == [(NAMES.group, NAMES.topic)]


def test_expected_quiet_fails_on_any_alert_of_the_group_naming_it_and_acks_it() -> None:
    watch = FakeWatch()

    def rewound(*_: Any) -> Caused:
        watch.fire(id="al-9", summary="rewound 150 -> 50")
        return moved()

    result = run(spec(rewound, alert_kind=None, severities=frozenset()), watch)
    assert (result.passed, result.seen_kind, result.alert_id) == (False, "offset_rewind", "al-9")
    assert result.detail == "raised offset_rewind/critical: rewound 150 -> 50"
    assert (watch.acks, result.acknowledged) == ([("al-9", "offsetguard drill x: FAIL")], "yes")


def test_broker_drills_refused_without_a_sandbox_or_with_too_few_brokers() -> None:
    cluster = ClusterSettings(name="c1", bootstrap_servers="127.0.0.1:1")
    with pytest.raises(DrillError, match="runs only on a sandbox"):
        DrillKafka(cluster).brokers(2)

    class OneBroker:
        def ids(self) -> list[int]:
            return [1]

    with pytest.raises(DrillError, match="needs 2 brokers, the sandbox has 1"):
        DrillKafka(cluster, OneBroker()).brokers(2)  # type: ignore[arg-type]
