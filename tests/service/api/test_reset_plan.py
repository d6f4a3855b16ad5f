from fastapi.testclient import TestClient

from collectors.settings import ClusterSettings
from service.api.reset_plan import build_plan, clamp, command_lines, render, shell_quote
from store import CommittedPoint, LatestPartition
from tests.service.api.builders import T0

PLAN = "/api/v1/clusters/prod/groups/clampy/reset-plan"


def _range(start: int | None, end: int | None) -> LatestPartition:
    return LatestPartition("prod", "t", 0, start, end, 1, 1, 0.0, 0.0)


def test_clamp_inside_range_unchanged_without_warning() -> None:
    assert clamp(50, _range(10, 100)) == (50, "")
    assert clamp(100, _range(10, 100)) == (100, "")


def test_clamp_below_log_start_raised_with_warning() -> None:
    offset, warning = clamp(3, _range(10, 100))
    assert offset == 10
    assert "records 3..9 were deleted" in warning


def test_clamp_beyond_log_end_lowered_with_warning() -> None:
    offset, warning = clamp(150, _range(10, 100))
    assert offset == 100
    assert "beyond" in warning


def test_clamp_unknown_range_kept_with_warning() -> None:
    assert clamp(7, None) == (7, "log range unknown: offset not checked")


def test_shell_quote_control_characters_stay_on_one_line() -> None:
    assert shell_quote("a b") == "'a b'"
    assert shell_quote("ü.ñ") == "'ü.ñ'"
    quoted = shell_quote("evil\n# x'")
    assert "\n" not in quoted
    assert quoted == "$'evil\\x0a# x\\''"


def test_command_lines_secured_cluster_adds_command_config() -> None:
    cluster = ClusterSettings(
        name="p",
        bootstrap_servers=["k1:9093"],
        security_protocol="SASL_SSL",
        sasl={"username": "u", "password": "secret-pw"},  # type: ignore[arg-type]
    )
    dry, execute = command_lines(cluster, "g 1")
    assert dry.endswith("--group 'g 1' --reset-offsets --from-file reset-plan.csv --dry-run")
    assert "--command-config client.properties" in execute and execute.endswith("--execute")
    assert "secret-pw" not in dry + execute


def test_render_kafka_format_only_three_columns() -> None:
    committed = [CommittedPoint("prod", "g", "t", p, T0, o, 1) for p, o in ((1, 5), (0, 500))]
    plan = build_plan("prod", "g", T0, committed, [("t", 2, 9)], lambda t, p: _range(10, 100), None)
    assert render(plan, "kafka") == "t,0,100\nt,1,10\n"
    annotated = render(plan, "annotated")
    data = [line for line in annotated.splitlines() if not line.startswith("#")]
    assert data[0].startswith("t,0,100,clamped to log end 100")
    assert data[1].startswith("t,1,10,clamped to log start 10")
    assert "not in plan (nothing committed then, Kafka leaves it): t-2 now at 9" in annotated


def test_reset_plan_route_annotated_default_has_command_and_warnings(client: TestClient) -> None:
    response = client.get(PLAN, params={"time": T0 + 30})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    assert response.headers["x-offsetguard-warnings"] == "2"
    text = response.text
    assert (
        "#   kafka-consumer-groups.sh --bootstrap-server k1:9092,k2:9092 --group clampy --reset-offsets"
        " --from-file reset-plan.csv --execute" in text
    )
    rows = [line.split(",", 3) for line in text.splitlines() if not line.startswith("#")]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("orders", "0", "200"),
        ("orders", "1", "20"),
        ("payments", "0", "15"),
    ]
    assert rows[2][3] == ""
    assert "orders-2 now at 7" in text  # committed after the plan's time: left alone


def test_reset_plan_route_kafka_format_exact_lines(client: TestClient) -> None:
    response = client.get(PLAN, params={"time": "2023-11-14T22:13:50Z", "format": "kafka"})
    assert response.text == "orders,0,200\norders,1,20\npayments,0,15\n"


def test_reset_plan_before_first_commit_404(client: TestClient) -> None:
    response = client.get(PLAN, params={"time": T0 - 10})
    assert (response.status_code, response.json()["error"]) == (404, "no_offsets_at_time")


def test_reset_plan_bad_format_or_time_422_naming_it(client: TestClient) -> None:
    assert client.get(PLAN, params={"time": T0, "format": "xml"}).json()["parameter"] == "format"
    assert client.get(PLAN, params={"time": "noon"}).json()["parameter"] == "time"
