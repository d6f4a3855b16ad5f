import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest

from collectors.compat import LIST_GROUPS_UNTYPED, Fallbacks
from collectors.kafka.group_requests import list_groups
from collectors.seam import ListedGroup


@dataclass
class Row:
    group_id: str
    protocol_type: str = "consumer"
    group_state: str = "Stable"
    group_type: str | None = None


@dataclass
class Response:
    API_VERSION: int
    groups: list[Row] = field(default_factory=list)
    error_code: int = 0


class Manager:
    """Answers every request with ``response`` (kafka-python's manager returns an awaitable)."""

    def __init__(self, response: Response) -> None:
        self.response = response

    def send(self, request: Any, node_id: int | None = None) -> Any:
        async def answer() -> Response:
            return self.response

        return answer()


def test_list_groups_v4_has_no_type_every_group_classic_and_the_fallback_counted() -> None:
    fallbacks = Fallbacks("old")
    manager = Manager(Response(4, [Row("a"), Row("b", group_state="Empty")]))
    listed = asyncio.run(list_groups(manager, "old", 1, fallbacks))
    assert listed == [
        ListedGroup("a", "classic", "Stable", "consumer"),
        ListedGroup("b", "classic", "Empty", "consumer"),
    ]
    [count] = fallbacks.counts()
    assert (count.fallback, count.count, count.detail) == (
        LIST_GROUPS_UNTYPED,
        1,
        "broker 1 answered ListGroups v4",
    )


@pytest.mark.parametrize("version", [5, 6])
def test_list_groups_v5_carries_types_no_fallback(version: int) -> None:
    fallbacks = Fallbacks("new")
    manager = Manager(Response(version, [Row("a", group_type="Consumer"), Row("b", group_type="Classic")]))
    listed = asyncio.run(list_groups(manager, "new", 2, fallbacks))
    assert [g.group_type for g in listed] == ["consumer", "classic"]
    assert fallbacks.counts() == ()
