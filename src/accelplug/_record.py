"""``@record``: a dataclass whose methods are closures instead of compiled source, because start-up pays for each class.

``@dataclass`` writes ``__init__``, ``__repr__``, ``__eq__`` (and, when frozen, ``__hash__``, ``__setattr__`` and
``__delattr__``) as source text for every class and compiles it when the class is created: 0.5 to 3 ms a class
on the project's 2-core machine, 2.5 to 6 times what ``@record`` costs (``benchmarks/record_cost.py``). Nineteen
classes on the path of ``import accelplug; Trainer()`` made that the largest single item of start-up
(``benchmarks/import_time.py`` shows where start-up goes). A ``@record`` class is
still a dataclass for everyone who reads it (``dataclasses.fields``, ``replace``, ``asdict``, ``is_dataclass``,
``__match_args__``); only those methods come from here, built from the class's fields without compiling anything.
Type checkers see ``@dataclass`` itself (``dataclass_transform``), so constructor calls stay checked.

What ``@dataclass`` options the project does not use (``order``, ``kw_only``, ``slots``, ``InitVar``) ``@record``
does not offer: such a class stays a plain ``@dataclass``.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from dataclasses import MISSING, Field, FrozenInstanceError, field
from typing import Any, TypeVar, overload

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # torch depends on typing_extensions
    from typing_extensions import dataclass_transform

__all__ = ["record"]

_C = TypeVar("_C", bound=type)


@overload
def record(cls: _C, /) -> _C: ...
@overload
def record(*, frozen: bool = False) -> Callable[[_C], _C]: ...
@dataclass_transform(field_specifiers=(field, Field))
def record(cls: _C | None = None, /, *, frozen: bool = False) -> _C | Callable[[_C], _C]:
    """Make ``cls`` a dataclass (``@record`` or ``@record(frozen=True)``), its methods as described above."""
    if cls is None:
        return lambda c: _build(c, frozen)
    return _build(cls, frozen)


def _build(cls: _C, frozen: bool) -> _C:
    dataclasses.dataclass(init=False, repr=False, eq=False)(cls)
    every = dataclasses.fields(cls)
    written = dict(cls.__dict__)
    if written.get("__hash__", MISSING) is None and "__eq__" in written:
        del written["__hash__"]  # Python's own None for a body with __eq__ only: not a hash the body chose
    for name, method in _methods(cls, every, frozen).items():
        if name not in written:  # a method the class body wrote wins, as with @dataclass
            setattr(cls, name, method)
    return cls


def _methods(cls: type, every: tuple[Field[Any], ...], frozen: bool) -> dict[str, Any]:
    compared = tuple(f.name for f in every if f.compare)
    shown = tuple(f.name for f in every if f.repr)

    def __repr__(self: Any) -> str:
        values = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{type(self).__qualname__}({values})"

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        # tuples, as @dataclass compares: an identical value is equal without asking it (a NaN, a tensor)
        return tuple(getattr(self, name) for name in compared) == tuple(getattr(other, name) for name in compared)

    methods: dict[str, Any] = {"__init__": _init(cls, every), "__repr__": __repr__, "__eq__": __eq__}
    if frozen:
        methods.update(_frozen(cls, every))
    else:
        methods["__hash__"] = None  # as @dataclass(eq=True): a mutable record is not hashable
    return methods


def _init(cls: type, every: tuple[Field[Any], ...]) -> Callable[..., None]:
    """``__init__``: the init fields by position or keyword, then the other fields' defaults, then ``__post_init__``."""
    title = cls.__qualname__
    takes = tuple((f.name, f.default, f.default_factory) for f in every if f.init)
    positional = tuple(name for name, _, _ in takes)
    required = sum(default is MISSING and factory is MISSING for _, default, factory in takes)
    takes_words = (
        f"{len(positional) + 1}" if required == len(positional) else f"from {required + 1} to {len(positional) + 1}"
    )
    fills = tuple((f.name, f.default, f.default_factory) for f in every if not f.init)
    post_init = hasattr(cls, "__post_init__")
    put = object.__setattr__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(positional):
            raise TypeError(
                f"{title}.__init__() takes {takes_words} positional arguments but {len(args) + 1} were given"
            )
        for name, value in zip(positional, args, strict=False):
            if name in kwargs:
                raise TypeError(f"{title}.__init__() got multiple values for argument {name!r}")
            kwargs[name] = value
        for name, default, factory in takes:
            if name in kwargs:
                value = kwargs.pop(name)
            elif default is not MISSING:
                value = default
            elif factory is not MISSING:
                value = factory()
            else:
                raise TypeError(f"{title}.__init__() missing 1 required positional argument: {name!r}")
            put(self, name, value)
        if kwargs:
            raise TypeError(f"{title}.__init__() got an unexpected keyword argument {next(iter(kwargs))!r}")
        for name, default, factory in fills:
            if default is not MISSING:
                put(self, name, default)
            elif factory is not MISSING:
                put(self, name, factory())
        if post_init:
            self.__post_init__()

    return __init__


def _frozen(cls: type, every: tuple[Field[Any], ...]) -> dict[str, Any]:
    """A frozen record's ``__hash__`` (of its compared fields), ``__setattr__`` and ``__delattr__``."""
    hashed = tuple(f.name for f in every if (f.compare if f.hash is None else f.hash))
    names = frozenset(f.name for f in every)

    def __hash__(self: Any) -> int:
        return hash(tuple(getattr(self, name) for name in hashed))

    def __setattr__(self: Any, name: str, value: Any) -> None:
        parent = super(cls, self)  # before the check below, which narrows ``cls`` for a type checker
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        parent.__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        parent = super(cls, self)
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        parent.__delattr__(name)

    return {"__hash__": __hash__, "__setattr__": __setattr__, "__delattr__": __delattr__}
