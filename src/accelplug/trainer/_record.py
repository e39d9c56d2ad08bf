"""The methods a dataclass would generate, written once: the Trainer's large records are built on every start-up.

``@dataclass`` writes ``__init__``, ``__repr__`` and ``__eq__`` as source text for each class and compiles it
when the class is created. For :class:`~accelplug.trainer.options.entries.TrainerOptions` and
:class:`~accelplug.trainer.state.LoopState` (about 40 fields each) that was the largest part of
``import accelplug.trainer``, on the path of every ``Trainer()`` (``benchmarks/import_time.py`` shows where
start-up goes). Declared as ``@dataclass(init=False, repr=False, eq=False)`` subclasses of :class:`Record`, they
keep their fields, defaults and metadata (``dataclasses.fields``, ``replace`` and ``asdict`` work as before)
and get the same three methods from here, which read the fields when called instead.
"""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any

__all__ = ["Record"]


class Record:
    """Base of a ``@dataclass(init=False, repr=False, eq=False)``: a dataclass's ``__init__`` (keywords only),
    ``__repr__`` and ``__eq__``, for every subclass alike."""

    __slots__ = ()

    def __init__(self, **values: Any) -> None:
        for f in fields(self):  # type: ignore[arg-type]  # a Record subclass is a dataclass
            if f.name in values:
                value = values.pop(f.name)
            elif f.default is not MISSING:
                value = f.default
            else:
                value = f.default_factory()  # type: ignore[operator]  # every field has a default or a factory
            object.__setattr__(self, f.name, value)  # a frozen record refuses setattr, as a dataclass's does
        if values:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument {next(iter(values))!r}"
            )

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f.name) for f in fields(self))  # type: ignore[arg-type]

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)  # type: ignore[arg-type]
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Record)
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # as a dataclass with eq: mutable records are not hashable
