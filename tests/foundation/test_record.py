"""``@record`` behaves as ``@dataclass`` for everything a caller can see: each test builds the same class both ways."""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from accelplug._record import record

Maker = Callable[..., Any]


def _pair(frozen: bool) -> list[type]:
    """The same class body under ``@dataclass`` and under ``@record``."""
    made = []
    for decorate in (dataclasses.dataclass(frozen=frozen), record(frozen=frozen)):

        class Point:
            x: int
            y: int = 2
            tags: list[str] = dataclasses.field(default_factory=list)
            note: str = dataclasses.field(default="n", repr=False, compare=False)
            seen: int = dataclasses.field(default=0, init=False)

        made.append(decorate(Point))
    return made


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        return ("value", call())
    except Exception as error:  # the error's type and words are part of the behaviour compared
        return ("error", type(error).__name__, str(error))


@pytest.mark.parametrize("frozen", [False, True], ids=["mutable", "frozen"])
@pytest.mark.parametrize(
    "call",
    [
        lambda cls: repr(cls(1)),
        lambda cls: repr(cls(1, 3, ["a"])),
        lambda cls: repr(cls(x=1, y=5)),
        lambda cls: cls(1) == cls(1),
        lambda cls: cls(1) == cls(1, note="other"),
        lambda cls: cls(1) == cls(2),
        lambda cls: cls(1).__eq__(object()),
        lambda cls: cls(1).tags is not cls(1).tags,
        lambda cls: cls(1).seen,
        lambda cls: repr(cls()),
        lambda cls: repr(cls(1, 2, [], "n", 4)),
        lambda cls: repr(cls(1, x=1)),
        lambda cls: repr(cls(1, z=1)),
        lambda cls: repr(cls(1, seen=3)),
        lambda cls: repr(dataclasses.replace(cls(1), y=7)),
        lambda cls: dataclasses.asdict(cls(1, tags=["t"])),
        lambda cls: [f.name for f in dataclasses.fields(cls)],
        lambda cls: cls.__match_args__,
        lambda cls: repr(pickle.loads(pickle.dumps(cls(1, 3)))),
    ],
    ids=[
        "repr-defaults",
        "repr-positional",
        "repr-keywords",
        "equal",
        "compare-false-field-ignored",
        "unequal",
        "other-type",
        "factory-per-instance",
        "init-false-default",
        "missing-argument",
        "too-many-positional",
        "twice",
        "unknown-keyword",
        "init-false-refused",
        "replace",
        "asdict",
        "fields",
        "match-args",
        "pickle",
    ],
)
def test_a_record_answers_as_a_dataclass(frozen: bool, call: Callable[[type], Any]) -> None:
    expected, got = _pair(frozen)
    assert _outcome(lambda: call(got)) == _outcome(lambda: call(expected))


def test_a_frozen_record_refuses_assignment_and_deletion_and_hashes_its_compared_fields() -> None:
    expected, got = _pair(frozen=True)
    for cls in (expected, got):
        point = cls(1)
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'x'"):
            point.x = 3
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'x'"):
            del point.x

    @record(frozen=True)
    class Key:
        name: str
        note: str = dataclasses.field(default="", compare=False)

    assert hash(Key("a", note="x")) == hash(Key("a", note="y")) == hash(dataclasses.dataclass(frozen=True)(_Key)("a"))
    assert {Key("a"), Key("a", note="z")} == {Key("a")}


class _Key:
    name: str
    note: str = dataclasses.field(default="", compare=False)


def test_a_mutable_record_is_unhashable_and_assignable() -> None:
    _, got = _pair(frozen=False)
    point = got(1)
    point.x = 5
    assert point.x == 5
    with pytest.raises(TypeError, match="unhashable"):
        hash(point)


def test_post_init_runs_after_the_fields_are_set_and_a_body_method_wins() -> None:
    @record(frozen=True)
    class Span:
        start: int
        end: int

        def __post_init__(self) -> None:
            if self.end < self.start:
                raise ValueError(f"end {self.end} before start {self.start}")

        def __repr__(self) -> str:
            return f"{self.start}..{self.end}"

    assert repr(Span(1, 3)) == "1..3"
    with pytest.raises(ValueError, match="end 0 before start 1"):
        Span(1, 0)


def test_a_tensor_field_compares_by_identity_first_as_a_dataclass_does() -> None:
    torch = pytest.importorskip("torch")

    @record
    class Holder:
        value: Any

    tensor = torch.ones(3)
    assert Holder(tensor) == Holder(tensor)
