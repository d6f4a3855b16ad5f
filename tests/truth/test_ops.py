"""The harness's OffsetFetch outlasts a coordinator that is loading or moving (a broker of the shared
cluster restarted by another cell) and gives up on anything else at once."""

from __future__ import annotations

from typing import Any, ClassVar

import kafka.errors as kerr
import pytest
from kafka.structs import OffsetAndMetadata, TopicPartition

from tests.truth import ops


class _Cluster:
    def client_config(self) -> dict[str, Any]:
        return {}


class _Admin:
    """KafkaAdminClient's ``list_group_offsets``: each answer in turn, an exception raised."""

    answers: ClassVar[list[Any]] = []
    closed = 0

    def __init__(self, **_: Any) -> None:
        pass

    def list_group_offsets(self, group: str) -> dict[str, dict[TopicPartition, OffsetAndMetadata]]:
        answer = _Admin.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return {group: answer}

    def close(self) -> None:
        _Admin.closed += 1


@pytest.fixture
def admin(monkeypatch: pytest.MonkeyPatch) -> type[_Admin]:
    monkeypatch.setattr(ops, "KafkaAdminClient", _Admin)
    monkeypatch.setattr(ops.time, "sleep", lambda _: None)
    _Admin.answers, _Admin.closed = [], 0
    return _Admin


def test_retriable_coordinator_errors_are_asked_again(admin: type[_Admin]) -> None:
    offsets = {
        TopicPartition("t", 0): OffsetAndMetadata(50, "", -1),
        TopicPartition("t", 1): OffsetAndMetadata(-1, "", -1),
    }
    admin.answers = [kerr.CoordinatorLoadInProgressError(), kerr.NotCoordinatorError(), offsets]
    assert ops.committed_offsets(_Cluster(), "g") == {("t", 0): 50}  # type: ignore[arg-type]
    assert admin.answers == [] and admin.closed == 3


def test_other_errors_and_a_coordinator_loading_past_the_deadline_raise(admin: type[_Admin]) -> None:
    admin.answers = [kerr.GroupAuthorizationFailedError(), {}]
    with pytest.raises(kerr.GroupAuthorizationFailedError):
        ops.committed_offsets(_Cluster(), "g")  # type: ignore[arg-type]
    admin.answers = [kerr.CoordinatorLoadInProgressError(), {}]
    with pytest.raises(kerr.CoordinatorLoadInProgressError):
        ops.committed_offsets(_Cluster(), "g", timeout=-1)  # type: ignore[arg-type]
