import pytest

from service.notify.silencing import check_matcher, matcher_matches, silence_matches, silenced_by
from store.notification_records import Matcher
from tests.service.notify.builders import T0, alert, silence


@pytest.mark.parametrize(
    ("matcher", "expected"),
    [
        (Matcher("kind", "=", "offset_rewind"), True),
        (Matcher("kind", "=", "offset_rew"), False),
        (Matcher("cluster", "!=", "prod"), False),
        (Matcher("cluster", "!=", "staging"), True),
        (Matcher("group", "=~", "bill.*"), True),
        (Matcher("group", "=~", "bill"), False),  # anchored at both ends, like Alertmanager
        (Matcher("topic", "=~", "orders|payments"), True),
        (Matcher("topic", "!~", "ord.*"), False),
        (Matcher("topic", "!~", "pay.*"), True),
    ],
)
def test_matcher_matches_exact_and_regex(matcher: Matcher, expected: bool) -> None:
    assert matcher_matches(matcher, alert()) is expected


def test_matcher_missing_label_matches_empty_string() -> None:
    cluster_wide = alert(group=None, topic=None)

    assert matcher_matches(Matcher("group", "=", ""), cluster_wide)
    assert not matcher_matches(Matcher("group", "=~", ".+"), cluster_wide)


def test_silence_matches_needs_every_matcher() -> None:
    both = silence(("kind", "=", "offset_rewind"), ("group", "=", "billing"))
    other_group = silence(("kind", "=", "offset_rewind"), ("group", "=", "search"))

    assert silence_matches(both, alert())
    assert not silence_matches(other_group, alert())


def test_silence_matches_without_matchers_matches_nothing() -> None:
    assert not silence_matches(silence(), alert())


@pytest.mark.parametrize(
    ("now", "status"),
    [(T0 - 11, "pending"), (T0 - 10, "active"), (T0 + 3599, "active"), (T0 + 3600, "expired")],
)
def test_silence_status_by_time_window(now: float, status: str) -> None:
    assert silence(("kind", "=", "x"), starts=T0 - 10, ends=T0 + 3600).status(now) == status


def test_silenced_by_only_active_silences() -> None:
    s = silence(("cluster", "=", "prod"), starts=T0, ends=T0 + 60)

    assert silenced_by([s], alert(), T0 - 1) is None
    assert silenced_by([s], alert(), T0 + 30) == s
    assert silenced_by([s], alert(), T0 + 60) is None


@pytest.mark.parametrize(
    ("matcher", "message"),
    [
        (Matcher("severity", "=", "critical"), "label must be one of"),
        (Matcher("kind", "==", "x"), "operator must be one of"),
        (Matcher("group", "=~", "(unclosed"), "invalid regex"),
    ],
)
def test_check_matcher_invalid_raises(matcher: Matcher, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_matcher(matcher)
