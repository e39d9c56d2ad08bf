"""``is_overridden``: whether a LightningModule, LightningDataModule or Callback wrote its own version of a method.

Lightning's public helper, with its rules: the method is compared, by its code, with the base class's (or
``parent``'s); a method wrapped with ``functools.wraps``/``update_wrapper`` or a ``partial`` is judged by the
function inside; a ``Mock`` counts as overridden unless it wraps the base's method. The Trainer itself decides which
hooks to call with the marks of :mod:`accelplug.overrides`, which agree for methods written in a class.
"""

from __future__ import annotations

import functools
from typing import Any
from unittest import mock

from ..callbacks.base import Callback
from ..errors import MisconfigurationException
from .datamodule import LightningDataModule
from .module import LightningModule

__all__ = ["is_overridden", "is_param_in_hook_signature"]


def _parent_of(instance: object) -> type:
    for base in (LightningModule, LightningDataModule, Callback):
        if isinstance(instance, base):
            return base
    raise MisconfigurationException("Expected a parent")


def _unwrapped(attribute: Any) -> Any:
    """The function a method stands for: the one ``functools.wraps`` or ``partial`` wrapped, a ``Mock``'s wrapped
    function (None: a bare mock, which counts as overridden)."""
    if hasattr(attribute, "__wrapped__"):
        attribute = attribute.__wrapped__
    if isinstance(attribute, mock.Mock):
        return attribute._mock_wraps
    if isinstance(attribute, functools.partial):
        return attribute.func
    return attribute


def is_overridden(method_name: str, instance: object | None = None, parent: type | None = None) -> bool:
    """Whether ``instance`` has its own ``method_name`` rather than ``parent``'s (by default the Lightning base class
    ``instance`` is an instance of; a ``ValueError`` for any other object)."""
    if instance is None:
        return False
    parent = _parent_of(instance) if parent is None else parent
    attribute = getattr(instance, method_name, None)
    if attribute is None:
        return False
    if isinstance(attribute, mock.Mock) and _unwrapped(attribute) is None:
        return True
    own = _unwrapped(attribute)
    if own is None:
        return False
    base = getattr(parent, method_name, None)
    if base is None:
        raise MisconfigurationException("The parent should define the method")
    base = getattr(base, "__wrapped__", base)
    own_code = getattr(own, "__code__", None)
    return own_code is None or own_code != getattr(base, "__code__", None)


def is_param_in_hook_signature(hook_fx: Any, param: str, explicit: bool = False, min_args: int | None = None) -> bool:
    """Whether ``hook_fx`` takes a parameter named ``param`` (besides ``self``), or takes ``*args`` unless
    ``explicit``, or takes at least ``min_args`` positional parameters."""
    import inspect

    hook_fx = getattr(hook_fx, "__wrapped__", hook_fx)
    spec = inspect.getfullargspec(hook_fx)
    arguments = spec.args[1:]
    return (
        param in arguments
        or (not explicit and spec.varargs is not None)
        or (isinstance(min_args, int) and len(arguments) >= min_args)
    )
