import logging

import pytest

from collectors.compat import LIST_GROUPS_UNTYPED, Fallbacks


def test_a_fallback_is_counted_every_time_and_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    fallbacks = Fallbacks("prod")
    with caplog.at_level(logging.WARNING, logger="collectors.compat"):
        fallbacks.note(LIST_GROUPS_UNTYPED, "broker 1 answered ListGroups v4")
        fallbacks.note(LIST_GROUPS_UNTYPED, "broker 2 answered ListGroups v4")
    [only] = fallbacks.counts()
    assert (only.cluster, only.fallback, only.count) == ("prod", LIST_GROUPS_UNTYPED, 2)
    assert only.detail == "broker 1 answered ListGroups v4"  # the first occurrence
    assert str(only.as_dict()["what"]).startswith("ListGroups without group types")
    [record] = caplog.records
    assert "prod" in record.getMessage() and "logged once" in record.getMessage()


def test_no_fallback_no_count() -> None:
    assert Fallbacks("prod").counts() == ()
