"""``Trainer(compile=...)``: where ``torch.compile`` enters the preparation order, and what it accepts.

The module is compiled in place (``nn.Module.compile``), after it was moved to its device and
converted to its precision and after the strategy wrapped it: its ``forward`` (what a hand-written
loop would compile) runs compiled wherever ``training_step`` calls ``self(...)``, the object the user
holds stays the same, and its ``state_dict`` keeps the user's keys (no ``_orig_mod.`` prefix), so a
checkpoint loads into an uncompiled module as well.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch

from ..errors import MisconfigurationException, did_you_mean

__all__ = ["COMPILE_MODES", "compile_module", "normalize_compile", "unwrap_compiled"]

#: ``torch.compile`` modes accepted by name (``True`` means "default").
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_KWARGS = ("fullgraph", "dynamic", "backend", "mode", "options", "disable")
ACCEPTED_COMPILE = (
    "False, True, a mode name ('default', 'reduce-overhead', 'max-autotune', 'max-autotune-no-cudagraphs') "
    "or a dict of torch.compile keyword arguments (fullgraph, dynamic, backend, mode, options, disable)"
)


def normalize_compile(value: object) -> dict[str, Any] | None:
    """The ``torch.compile`` keyword arguments for a ``compile`` option, or None for no compiling."""
    if value is None or value is False:
        return None
    if value is True:
        return {}
    if isinstance(value, str):
        mode = value.strip().lower()
        if mode not in COMPILE_MODES:
            raise MisconfigurationException(
                f"compile={value!r} is not a torch.compile mode. Accepted: {ACCEPTED_COMPILE}."
                f"{did_you_mean(mode, list(COMPILE_MODES))}"
            )
        return {} if mode == "default" else {"mode": mode}
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in _KWARGS]
        if unknown:
            raise MisconfigurationException(
                f"compile={dict(value)!r} holds {unknown[0]!r}, which is not a torch.compile keyword argument. "
                f"Accepted: {ACCEPTED_COMPILE}.{did_you_mean(str(unknown[0]), list(_KWARGS))}"
            )
        chosen: Any = value.get("mode")
        if chosen is not None and chosen not in COMPILE_MODES:
            raise MisconfigurationException(
                f"compile={dict(value)!r}: mode={chosen!r} is not a torch.compile mode; accepted: {COMPILE_MODES}."
            )
        return dict(value)
    raise MisconfigurationException(f"compile={value!r} is invalid. Accepted: {ACCEPTED_COMPILE}.")


def unwrap_compiled(module: torch.nn.Module) -> torch.nn.Module:
    """The original module of one the user compiled with ``torch.compile(model)`` before handing it over."""
    original = getattr(module, "_orig_mod", None)
    return original if isinstance(original, torch.nn.Module) else module


def compile_module(
    module: torch.nn.Module, wrapped: torch.nn.Module | None, options: dict[str, Any]
) -> Callable[[Any, int], Any]:
    """Compile ``module``'s forward in place; the callable the loop runs a training step with."""
    from .base import training_step_caller

    module.compile(**options)
    return wrapped if wrapped is not None else training_step_caller(module)
