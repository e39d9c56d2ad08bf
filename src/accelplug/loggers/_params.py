"""Turning hyper-parameters and metric names into what each tracker accepts, the way Lightning does.

The trackers record what these functions give them, so they follow Lightning 2.6 value for value: a
project that moves from Lightning to accelplug sees the same keys and values in its W&B config, its
MLflow params and its Comet parameters (the parity tests compare them in the real services).
"""

from __future__ import annotations

import inspect
import json
from argparse import Namespace
from collections.abc import Mapping, MutableMapping
from dataclasses import asdict, is_dataclass
from typing import Any

__all__ = ["add_prefix", "as_dict", "callables_to_names", "flatten", "json_safe"]


def as_dict(params: Mapping[str, Any] | Namespace | None) -> dict[str, Any]:
    """Hyper-parameters as a plain dict: a Namespace gives its attributes, None gives nothing."""
    if params is None:
        return {}
    if isinstance(params, Namespace):
        return dict(vars(params))
    return dict(params)


def _callable_to_value(value: Any) -> Any:
    if inspect.isclass(value):
        return value.__name__
    if not callable(value):
        return value
    # Lightning calls a callable with no arguments so a factory (``lambda: "relu"``) reports its value;
    # one that needs arguments, or returns another callable, is recorded by its name.
    try:
        produced = value()
    except Exception:
        return getattr(value, "__name__", None)
    return value.__name__ if callable(produced) else produced


def callables_to_names(params: Mapping[str, Any]) -> dict[str, Any]:
    """Classes become their names and callables their result or name (top level only, as in Lightning)."""
    return {key: _callable_to_value(value) for key, value in params.items()}


def _is_json_safe(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float, str, list, dict)):
        return True
    try:
        json.dumps(value)
    except (TypeError, OverflowError):
        return False
    return True


def json_safe(params: Mapping[str, Any]) -> dict[str, Any]:
    """Top-level values JSON cannot encode become their ``str()``; the rest pass unchanged."""
    return {key: value if _is_json_safe(value) else str(value) for key, value in params.items()}


def flatten(params: Mapping[Any, Any], separator: str = "/", parent: str = "") -> dict[str, Any]:
    """Nested mappings (and dataclasses, Namespaces, lists of mappings) become ``"outer/inner"`` keys.

    ``{"optim": {"lr": 0.1}, "layers": [{"width": 8}]}`` gives ``{"optim/lr": 0.1, "layers/0/width": 8}``;
    other lists stay whole values (an empty list too, where Lightning 2.6 drops the key).
    """
    flat: dict[str, Any] = {}
    for key, value in params.items():
        name = f"{parent}{separator}{key}" if parent else str(key)
        if is_dataclass(value) and not isinstance(value, type):
            value = asdict(value)
        elif isinstance(value, Namespace):
            value = vars(value)
        if isinstance(value, MutableMapping):
            flat.update(flatten(value, separator, name))
        elif isinstance(value, list) and value and all(isinstance(item, MutableMapping) for item in value):
            # Non-empty only: Lightning's test lets an empty list through here and so drops the key.
            for index, item in enumerate(value):
                flat.update(flatten(item, separator, f"{name}{separator}{index}"))
        else:
            flat[name] = value
    return flat


def add_prefix(metrics: Mapping[str, Any], prefix: str | None, separator: str) -> dict[str, Any]:
    """``{"loss": 1}`` with prefix ``"train"`` and separator ``"-"`` gives ``{"train-loss": 1}``."""
    if not prefix:
        return dict(metrics)
    return {f"{prefix}{separator}{key}": value for key, value in metrics.items()}
