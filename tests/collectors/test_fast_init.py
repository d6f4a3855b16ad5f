"""collectors.fast_init: the same frozen dataclass, built by a faster ``__init__``; refused where it
would not be the same."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from dataclasses import dataclass, field

import pytest

from alerts.model import CommitEvent
from collectors.codec.records import OffsetCommit
from collectors.fast_init import fast_init
from collectors.model import CommittedOffset, PartitionOffsets
from collectors.tail_model import TailEvent


@fast_init
@dataclass(frozen=True, slots=True)
class Fast:
    a: int
    b: str
    c: int | None = None
    d: tuple[int, ...] = ()


@fast_init
@dataclass(frozen=True, slots=True)
class Derived(Fast):
    e: str = "e"


def fields_of(x: Fast) -> tuple[object, ...]:
    return x.a, x.b, x.c, x.d


def test_same_values_defaults_and_keywords_as_the_dataclass_init() -> None:
    assert fields_of(Fast(1, "b")) == (1, "b", None, ())
    assert fields_of(Fast(1, "b", 3, (4,))) == (1, "b", 3, (4,))
    assert fields_of(Fast(b="b", a=1, d=(5,))) == (1, "b", None, (5,))
    assert Derived(1, "b", e="x").e == "x" and Derived(1, "b").c is None
    # the signature the dataclass gave it (annotations as strings: postponed evaluation)
    signature = "(a: 'int', b: 'str', c: 'int | None' = None, d: 'tuple[int, ...]' = ()) -> None"
    assert str(inspect.signature(Fast)) == signature


def test_still_the_frozen_dataclass() -> None:
    x = Fast(1, "b", 3)
    assert x == Fast(1, "b", 3) and hash(x) == hash(Fast(1, "b", 3)) and x != Fast(2, "b", 3)
    assert repr(x) == "Fast(a=1, b='b', c=3, d=())"
    with pytest.raises(dataclasses.FrozenInstanceError):
        x.a = 2  # type: ignore[misc]
    assert dataclasses.replace(x, b="z") == Fast(1, "z", 3)
    assert pickle.loads(pickle.dumps(x)) == x and copy.deepcopy(x) == x
    assert type(x).__init__.__qualname__ == "Fast.__init__"


def test_wrong_arguments_are_refused_as_by_any_init() -> None:
    with pytest.raises(TypeError):
        Fast(1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Fast(1, "b", 3, (), 5)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Fast(1, "b", z=1)  # type: ignore[call-arg]


@pytest.mark.parametrize("kind", ["not slotted", "factory", "post_init", "kw_only", "not a dataclass"])
def test_refuses_classes_it_would_change(kind: str) -> None:
    with pytest.raises(TypeError, match="fast_init"):
        if kind == "not slotted":

            @fast_init
            @dataclass(frozen=True)
            class A:
                a: int

        elif kind == "factory":

            @fast_init
            @dataclass(frozen=True, slots=True)
            class B:
                a: list[int] = field(default_factory=list)

        elif kind == "post_init":

            @fast_init
            @dataclass(frozen=True, slots=True)
            class C:
                a: int

                def __post_init__(self) -> None:
                    pass

        elif kind == "kw_only":

            @fast_init
            @dataclass(frozen=True, slots=True, kw_only=True)
            class D:
                a: int

        else:

            @fast_init
            class E:
                __slots__ = ("a",)


@pytest.mark.parametrize(
    ("cls", "args"),
    [
        (OffsetCommit, (1, "g", "t", 0, 3, 10, 5, "m", 1000, None, None)),
        (TailEvent, ("c", 0, 7, 1000, None)),
        (CommitEvent, ("c", "g", "t", 0, 10, 5, 1000, 0, 7)),
        (CommittedOffset, ("g", "t", 0, 10, 5)),
        (PartitionOffsets, ("t", 0, 1, 10)),
    ],
)
def test_the_per_commit_classes_use_it(cls: type, args: tuple[object, ...]) -> None:
    """The classes made once per commit (or per partition a cycle): their ``__init__`` is fast_init's
    (it stores through ``_set0``...; the generated one calls ``object.__setattr__``), fields as given,
    defaults where not, still frozen."""
    assert "_set0" in vars(cls)["__init__"].__code__.co_names
    x = cls(*args)
    names = [f.name for f in dataclasses.fields(cls)]
    assert tuple(getattr(x, n) for n in names[: len(args)]) == args
    assert all(getattr(x, f.name) == f.default for f in dataclasses.fields(cls)[len(args) :])
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(x, names[0], None)
