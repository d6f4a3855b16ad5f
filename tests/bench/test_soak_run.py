from bench.soak.incidents import Injected
from bench.soak.run import _judge


def _alert(kind: str, at: float, outside: tuple[str, ...], group: str | None = None) -> dict[str, object]:
    return {
        "kind": kind,
        "severity": "warning",
        "group": group,
        "topic": None,
        "started_at": at,
        "evidence": {"committed_outside_range": outside},
    }


def _retention(at: float = 100.0) -> Injected:
    return Injected("retention_passes_stuck_group", at, {"soak-retention"}, {"soak-retention"}, [])


def test_judge_out_of_range_fetches_naming_only_an_incidents_group_is_the_incidents() -> None:
    page = _alert("out_of_range_fetches", 130, ("soak-retention soak-retention[0]=1082 (1429..1746)",))
    result = _judge([page], [], [], [_retention()])  # type: ignore[list-item]
    assert (result["false_page_count"], result["incident_pages"]) == (0, 1)


def test_judge_out_of_range_fetches_naming_another_group_or_none_or_before_the_incident_false() -> None:
    other = "soak-g3 soak-t3[2]=600 (620..700)"
    for page in (
        _alert("out_of_range_fetches", 130, ("soak-retention soak-retention[0]=1082 (1429..1746)", other)),
        _alert("out_of_range_fetches", 130, ()),
        _alert("out_of_range_fetches", 50, ("soak-retention soak-retention[0]=1082 (1429..1746)",)),
    ):
        result = _judge([page], [], [], [_retention()])  # type: ignore[list-item]
        assert result["false_page_count"] == 1, page
