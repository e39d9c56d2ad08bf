"""The Trainer's defaults with the contract's precedence: argument > ``ACCELPLUG_*`` > config file > built-in.

An argument the user did not pass arrives as an :class:`Unset` (a ``str`` that reads as the built-in
default, so ``help(Trainer)`` still shows ``accelerator='auto'``). Only those are looked up in the
environment and the config file, through the same loader ``accelplug launch`` and ``demo`` use; when
no ``ACCELPLUG_*`` setting and no config file exist, nothing is imported or read at all.
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
from collections.abc import Callable
from typing import Any, TypeVar, cast

from ..._record import record
from ...selection import Choices
from ...strategies.base import accelerator_of, devices_of

__all__ = ["UNSET_AUTO", "UNSET_PRECISION", "ResolvedDefaults", "Unset", "lightning_env_defaults", "resolve_defaults"]

_F = TypeVar("_F", bound=Callable[..., Any])
_PL_PREFIX = "PL_TRAINER_"


def lightning_env_defaults(init: _F) -> _F:
    """Lightning's ``PL_TRAINER_<ARGUMENT>`` environment variables as defaults of the arguments a call leaves out
    (a Python literal, else the text: ``PL_TRAINER_MAX_STEPS=7``, ``PL_TRAINER_LOGGER=False``); an argument
    passed wins. Nothing is parsed when no such variable is set, and ``init``'s signature is read only then (reading
    the Trainer's 47 parameters at import would cost every ``Trainer()``'s start-up)."""
    signature = functools.cache(lambda: inspect.signature(init))

    @functools.wraps(init)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> None:
        names = [k[len(_PL_PREFIX) :].lower() for k in os.environ if k.startswith(_PL_PREFIX)]
        if names:
            bound = signature().bind_partial(self, *args, **kwargs).arguments
            for name in names:
                if name in signature().parameters and name not in bound and name != "self":
                    kwargs[name] = _literal(os.environ[_PL_PREFIX + name.upper()])
        init(self, *args, **kwargs)

    return cast(_F, wrapper)


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


_SETTINGS = ("accelerator", "devices", "strategy", "precision", "mps_fallback", "num_nodes")


class Unset(str):
    """A default the caller did not pass; it reads (and compares) as the built-in value it stands for."""

    __slots__ = ()


class _UnsetInt(int):
    __slots__ = ()


class _UnsetBool(int):
    """``False`` that remembers it was not passed (bool cannot be subclassed)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "False"

    def __bool__(self) -> bool:
        return False


UNSET_AUTO = Unset("auto")
UNSET_PRECISION = Unset("32-true")
UNSET_ONE = _UnsetInt(1)
UNSET_FALSE: Any = _UnsetBool(0)


def is_unset(value: object) -> bool:
    return isinstance(value, (Unset, _UnsetInt, _UnsetBool))


@record(frozen=True)
class ResolvedDefaults:
    #: The values, each the argument, else the environment's or the config file's, else the built-in default.
    choices: Choices
    #: Where each value came from, in words ("argument", "environment variable ACCELPLUG_PRECISION", ...).
    origins: dict[str, str]


def _anything_configured() -> bool:
    if any(os.environ.get(f"ACCELPLUG_{key.upper()}", "").strip() for key in _SETTINGS):
        return True
    if os.environ.get("ACCELPLUG_CONFIG_FILE", "").strip():
        return True
    from ...envvars import config_path

    return config_path().is_file()


def resolve_defaults(**arguments: Any) -> ResolvedDefaults:
    """Fill the arguments that were not passed from the environment and the config file (a strategy object built
    with ``accelerator=`` or ``parallel_devices=`` passes those, as in Lightning:
    :func:`~accelplug.strategies.base.accelerator_of`, :func:`~accelplug.strategies.base.devices_of`)."""
    if "accelerator" in arguments:
        accelerator = arguments["accelerator"]
        passed = not is_unset(accelerator)
        arguments["accelerator"] = accelerator_of(arguments.get("strategy"), accelerator, given=passed)
        if "devices" in arguments:
            strategy, accelerator = arguments.get("strategy"), arguments["accelerator"]
            arguments["accelerator"], arguments["devices"] = devices_of(strategy, accelerator, arguments["devices"])
    given = {k: v for k, v in arguments.items() if not is_unset(v)}
    builtin = {k: _plain(v) for k, v in arguments.items() if is_unset(v)}
    origins = dict.fromkeys(given, "argument") | dict.fromkeys(builtin, "built-in default")
    if not builtin or not _anything_configured():
        return ResolvedDefaults(Choices(**{**builtin, **given}), origins)
    from ...config import explain_settings

    settings, where, _config = explain_settings()
    values = dict(given)
    for key, default in builtin.items():
        origin = where.get(key)
        if origin is None or origin.kind == "default":
            values[key] = default
            continue
        if key == "accelerator" and origin.kind == "environment":
            values[key] = "auto"  # select() honours ACCELPLUG_ACCELERATOR itself and says so in its reason
            origins[key] = str(origin)
            continue
        value: Any = getattr(settings, key)
        if key == "devices" and isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
        values[key] = value
        origins[key] = str(origin)
    return ResolvedDefaults(Choices(**values), origins)


def _plain(value: Any) -> Any:
    if isinstance(value, Unset):
        return str(value)
    if isinstance(value, _UnsetBool):
        return False
    if isinstance(value, _UnsetInt):
        return int(value)
    return value
