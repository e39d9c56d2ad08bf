"""Which hooks an object overrides, told by a mark the base classes put on their own defaults.

``Callback``, ``LightningModule`` and ``LightningDataModule`` define every hook as a method that does
nothing (or Lightning's default behaviour), marked with :func:`default_hook`. The Trainer calls a hook
only where a subclass wrote its own (:func:`overrides`), so a hook nobody wrote costs nothing per step;
and asking needs no import of the base class, so the data sources below the module base can ask it
of modules and datamodules. The hooks a class declares are read from the same marks
(:func:`hook_names`): a hook's name is written once, as the method that declares it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["default_hook", "default_method", "hook_names", "overrides", "writes_own"]

_F = TypeVar("_F", bound=Callable[..., Any])
_MARK = "__accelplug_default_hook__"
_METHOD_MARK = "__accelplug_default_method__"


def default_hook(function: _F) -> _F:
    """Mark a base class's method as the default of a hook: a subclass that keeps it does not override it."""
    setattr(function, _MARK, True)
    return function


def default_method(function: _F) -> _F:
    """Mark a base class's default of a method the Trainer calls only where a subclass writes it, but that is no
    hook (``training_step``, ``train_dataloader``...): Lightning's base classes have them, so a module can
    call ``super().training_step(...)``, yet their presence must not make a stage or a loader appear."""
    setattr(function, _METHOD_MARK, True)
    return function


#: Lightning's own base classes, which a library's module or callback may subclass instead of accelplug's: the
#: methods they define are Lightning's defaults, not overrides (as Lightning's ``is_overridden`` tells them).
_LIGHTNING_BASE_MODULES = frozenset(
    f"{root}.{path}"
    for root in ("lightning.pytorch", "pytorch_lightning")
    for path in ("core.hooks", "core.module", "core.datamodule", "callbacks.callback")
)


def overrides(obj: object, name: str) -> bool:
    """Whether ``obj`` has its own ``name``: a callable that is not a base class's marked default (nor a default of
    Lightning's own base classes)."""
    if name in getattr(obj, "__dict__", ()):  # set on this instance (LambdaCallback): it wins over the class's
        return callable(vars(obj)[name])
    attr = getattr(type(obj), name, None)
    if attr is None:
        return callable(getattr(obj, name, None))  # set on the instance
    if not callable(attr) or getattr(attr, _MARK, False) or getattr(attr, _METHOD_MARK, False):
        return False
    owner = next((klass for klass in type(obj).__mro__ if name in vars(klass)), None)
    return owner is None or owner.__module__ not in _LIGHTNING_BASE_MODULES


def writes_own(obj: object, name: str) -> bool:
    """:func:`overrides`, seeing through what wraps a hook set on the instance (``functools.wraps``/
    ``update_wrapper``, ``functools.partial``, ``Mock(wraps=...)``): such a wrapper around the base class's default
    is no override of the hook's meaning (Lightning's ``is_overridden``), for checks that refuse a combination."""
    if not overrides(obj, name):
        return False
    from functools import partial
    from unittest.mock import Mock

    attr: Any = getattr(obj, name)
    for _ in range(8):  # a few layers at most
        if isinstance(attr, Mock):
            inner = attr._mock_wraps
        elif hasattr(attr, "__wrapped__"):  # functools.wraps/update_wrapper, a partial's included
            inner = attr.__wrapped__
        else:
            inner = attr.func if isinstance(attr, partial) else None
        if inner is None or inner is attr:
            break
        attr = inner
    return not getattr(attr, _MARK, False) and not getattr(attr, _METHOD_MARK, False)


def hook_names(cls: type) -> tuple[str, ...]:
    """The hooks ``cls`` declares: its marked defaults, in the order they are defined (base classes first)."""
    names: dict[str, None] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            if getattr(value, _MARK, False):
                names[name] = None
    return tuple(names)
