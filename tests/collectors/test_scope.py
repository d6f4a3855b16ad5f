"""The scope object: include/exclude patterns of groups and topics, excluded pairs, memoised answers."""

from __future__ import annotations

import pytest

from collectors.errors import ConfigError
from collectors.scope import EVERYTHING, MEMO_LIMIT, Scope
from collectors.settings import ClusterSettings, NameFilter


def scope(**cluster: object) -> Scope:
    return Scope.of(ClusterSettings(name="c", bootstrap_servers=["k:9092"], **cluster))  # type: ignore[arg-type]


def test_scope_default_keeps_everything() -> None:
    s = scope()
    assert s.everything and s.all_topics
    assert s.group_in("console-consumer-1") and s.topic_in("__consumer_offsets") and s.pair_in("g", "t")
    assert EVERYTHING.everything


def test_scope_exclude_is_fully_matched() -> None:
    s = scope(groups={"exclude": ["console-consumer-.*"]})
    assert not s.group_in("console-consumer-4711")
    assert s.group_in("my-console-consumer-1")  # a prefix match would have dropped it
    assert not s.everything and s.all_topics


def test_scope_exclude_wins_over_include() -> None:
    s = scope(topics={"include": ["orders.*", "__.*"], "exclude": ["__.*"]})
    assert s.topic_in("orders") and s.topic_in("orders-eu")
    assert not s.topic_in("__consumer_offsets")
    assert not s.topic_in("payments")  # include given: what it does not match is out


def test_scope_empty_include_is_all() -> None:
    s = scope(groups={"include": [], "exclude": ["test-.*"]})
    assert s.group_in("anything") and not s.group_in("test-1")


def test_scope_excluded_pair_drops_only_that_pair() -> None:
    s = scope(exclude_pairs=[{"group": "audit-.*", "topic": "payments"}])
    assert not s.pair_in("audit-1", "payments")
    assert s.pair_in("audit-1", "orders") and s.pair_in("billing", "payments")
    assert s.group_in("audit-1") and s.topic_in("payments")  # neither is out on its own
    assert not s.all_topics


def test_scope_record_in_uses_the_pair_for_commits_and_the_group_otherwise() -> None:
    s = scope(groups={"exclude": ["x"]}, exclude_pairs=[{"group": "g", "topic": "t"}])
    assert not s.record_in("g", "t") and s.record_in("g", None) and not s.record_in("x", None)


def test_scope_answers_are_memoised_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    s = scope(groups={"exclude": ["a.*"]})
    assert not s.group_in("ab") and s._groups == {"ab": False}
    monkeypatch.setattr("collectors.scope.MEMO_LIMIT", 2)
    for name in ("b1", "b2", "b3"):
        s.group_in(name)
    assert len(s._groups) <= 2 < MEMO_LIMIT


def test_scope_as_dict_lists_the_patterns() -> None:
    s = Scope.from_patterns(NameFilter(exclude=["console-consumer-.*"]), None, [("g", "t")])
    assert s.as_dict() == {
        "groups": {"include": [], "exclude": ["console-consumer-.*"]},
        "topics": {"include": [], "exclude": []},
        "exclude_pairs": [{"group": "g", "topic": "t"}],
    }


@pytest.mark.parametrize(
    ("section", "field"),
    [
        ({"groups": {"exclude": ["ok", "bad("]}}, "clusters.0.groups.exclude.1"),
        ({"topics": {"include": ["[z-a]"]}}, "clusters.0.topics.include.0"),
        ({"exclude_pairs": [{"group": "g", "topic": "*"}]}, "clusters.0.exclude_pairs.0.topic"),
    ],
)
def test_settings_invalid_regex_is_a_config_error_naming_the_field(
    section: dict[str, object], field: str
) -> None:
    from service.settings import load_settings

    with pytest.raises(ConfigError) as err:
        load_settings(clusters=[{"name": "c", "bootstrap_servers": "k:9092", **section}])
    assert err.value.field == field
    assert "not a regular expression" in str(err.value)


def test_settings_scope_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from service.settings import load_settings

    monkeypatch.setenv(
        "OFFSETGUARD_CLUSTERS",
        '[{"name": "c", "bootstrap_servers": "k:9092", "groups": {"exclude": ["console-consumer-.*"]},'
        ' "topics": {"exclude": ["__.*"]}, "exclude_pairs": [{"group": "g", "topic": "t"}]}]',
    )
    s = Scope.of(load_settings().clusters[0])
    assert not s.group_in("console-consumer-1") and not s.topic_in("__x") and not s.pair_in("g", "t")
