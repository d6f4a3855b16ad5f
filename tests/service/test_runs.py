from service.runs import has_run
from service.scheduler import CollectorStatus


def test_has_run_after_a_success_or_a_failure_not_before() -> None:
    status = CollectorStatus("offsets", "c", 5.0)
    assert not has_run(status)
    assert has_run(CollectorStatus("offsets", "c", 5.0, last_success_at=1.0))
    assert has_run(CollectorStatus("offsets", "c", 5.0, failures=1, last_failure_at=1.0))
