from dataclasses import replace

from service.notify.payloads import alertmanager_alert, am_labels, webhook_payload
from tests.service.notify.builders import T0, alert, resolved


def test_webhook_payload_firing_carries_every_alert_field() -> None:
    a = replace(alert(), snapshot_id="snap-7", occurrences=2)

    body = webhook_payload(
        a, "firing", transition="fired", runbook_base="https://wiki/runbooks", external_url="http://og:8080"
    )

    assert body == {
        "version": "1",
        "event": "firing",
        "transition": "fired",
        "alert": {
            "id": "al-1",
            "kind": "offset_rewind",
            "severity": "critical",
            "status": "firing",
            "cluster": "prod",
            "group": "billing",
            "topic": "orders",
            "partition": 3,
            "summary": "billing rewound on orders-3",
            "cause": "manual_reset",
            "magnitude": {"messages_replayed": 200},
            "magnitude_total": {"messages_replayed": 200},
            "evidence": {"old_offset": 500, "new_offset": 300},
            "occurrences": 2,
            "started_at": "2023-11-14T22:13:20.000Z",
            "updated_at": "2023-11-14T22:13:20.000Z",
            "resolved_at": None,
            "resolved_reason": None,
            "runbook_url": "https://wiki/runbooks/offset_rewind.md",
            "snapshot_id": "snap-7",
            "drill": False,
            "url": "http://og:8080/api/v1/alerts/al-1",
        },
    }


def test_webhook_payload_resolved_has_resolution() -> None:
    body = webhook_payload(resolved(alert(), T0 + 60), "resolved", transition="resolved", runbook_base=None)

    assert body["alert"]["status"] == "resolved"
    assert body["alert"]["resolved_at"] == "2023-11-14T22:14:20.000Z"
    assert body["alert"]["resolved_reason"] == "cleared"
    assert body["alert"]["runbook_url"] is None


def test_webhook_payload_firing_event_of_since_resolved_alert_says_firing() -> None:
    # The fired transition is fanned out after the alert resolved: the row must still say firing.
    body = webhook_payload(resolved(alert(), T0 + 60), "firing", transition="fired", runbook_base=None)

    assert body["alert"]["status"] == "firing"
    assert body["alert"]["resolved_at"] is None


def test_alertmanager_alert_firing_labels_annotations_no_end() -> None:
    body = alertmanager_alert(
        replace(alert(), snapshot_id="snap-7"),
        "firing",
        runbook_base="https://wiki",
        external_url="http://og",
    )

    assert body == {
        "labels": {
            "alertname": "offset_rewind",
            "severity": "critical",
            "cluster": "prod",
            "group": "billing",
            "topic": "orders",
            "partition": "3",
        },
        "annotations": {
            "summary": "billing rewound on orders-3",
            "description": (
                "billing rewound on orders-3; cause: manual_reset; magnitude: messages_replayed=200"
            ),
            "runbook_url": "https://wiki/offset_rewind.md",
            "alert_id": "al-1",
            "snapshot_id": "snap-7",
        },
        "startsAt": "2023-11-14T22:13:20.000Z",
        "generatorURL": "http://og/api/v1/alerts/al-1",
    }


def test_alertmanager_alert_resolved_ends_at_resolution() -> None:
    body = alertmanager_alert(resolved(alert(), T0 + 90), "resolved", runbook_base=None)

    assert body["endsAt"] == "2023-11-14T22:14:50.000Z"
    assert "generatorURL" not in body
    assert "runbook_url" not in body["annotations"]


def test_am_labels_cluster_wide_alert_leaves_absent_labels_out() -> None:
    a = alert(
        kind="offsets_topic_cleaner_stalled", group=None, topic=None, partition=None, severity="warning"
    )

    assert am_labels(a) == {
        "alertname": "offsets_topic_cleaner_stalled",
        "severity": "warning",
        "cluster": "prod",
    }


def test_am_labels_partition_zero_kept() -> None:
    assert am_labels(alert(partition=0))["partition"] == "0"


def test_drill_alert_is_marked_in_webhook_label_and_description_others_are_not() -> None:
    drill = replace(alert(), group="offsetguard-drill-rewind-ab12", topic="offsetguard-drill-rewind-ab12")
    body = webhook_payload(drill, "firing", transition="fired", runbook_base=None)
    assert body["alert"]["drill"] is True
    assert am_labels(drill)["drill"] == "true"
    assert alertmanager_alert(drill, "firing", runbook_base=None)["annotations"]["description"].startswith(
        "[drill] "
    )
    # a name that merely contains the prefix is no drill
    other = replace(alert(), group="team-offsetguard-drill-x", topic="orders")
    assert webhook_payload(other, "firing", transition="fired", runbook_base=None)["alert"]["drill"] is False
    assert "drill" not in am_labels(other)
