"""A LightningModule from the output of ``torch.compile``, and back (Lightning's ``from_compiled``/``to_uncompiled``).

``torch.compile(module)`` returns a wrapper that runs the module's ``forward`` optimized but is no
``LightningModule``. ``from_compiled`` gives the module itself back with its ``forward`` and step methods run
through the same compiler, so a Trainer accepts it; ``to_uncompiled`` restores the plain methods. (The Trainer also
takes the wrapper directly, and ``Trainer(compile=...)`` compiles in place.)
"""

from __future__ import annotations

from typing import Any

import torch

from ..errors import MisconfigurationException
from .module import LightningModule

__all__ = ["from_compiled", "to_uncompiled"]

_COMPILED_METHODS = ("forward", "training_step", "validation_step", "test_step", "predict_step")


def _compiled_wrapper_type() -> type:
    from torch._dynamo import OptimizedModule  # loaded when first asked: it imports the compiler

    return OptimizedModule


def from_compiled(model: Any) -> LightningModule:
    """The LightningModule inside ``model`` (what ``torch.compile`` returned), its methods compiled alike."""
    if not isinstance(model, _compiled_wrapper_type()):
        raise MisconfigurationException(
            f"`model` is required to be a `OptimizedModule`. Found a `{type(model).__name__}` instead."
        )
    module = model._orig_mod  # type: ignore[attr-defined]
    if not isinstance(module, LightningModule):
        raise MisconfigurationException(
            f"`model` is expected to be a compiled LightningModule. Found a `{type(module).__name__}` instead"
        )
    compile_with = model.dynamo_ctx  # type: ignore[attr-defined]
    context: dict[str, Any] = {"compiler": "dynamo", "dynamo_ctx": compile_with}
    for name in _COMPILED_METHODS:
        original = getattr(module, name)
        context[f"original_{name}"] = original
        setattr(module, name, compile_with(original))
    module._compiler_ctx = context  # type: ignore[assignment]
    return module


def to_uncompiled(model: LightningModule | torch.nn.Module) -> LightningModule:
    """The plain LightningModule of ``model`` (``torch.compile``'s wrapper, or ``from_compiled``'s result); the
    module's own methods are restored in place."""
    if isinstance(model, _compiled_wrapper_type()):
        module = model._orig_mod
        if not isinstance(module, LightningModule):
            raise TypeError(
                f"Unexpected error, the wrapped model should be a LightningModule, found {type(model).__name__}"
            )
    elif isinstance(model, LightningModule):
        if getattr(model, "_compiler_ctx", None) is None:
            raise MisconfigurationException(
                "`model` is required to be a compiled LightningModule. Found a non-compiled LightningModule instead."
            )
        module = model
    else:
        raise MisconfigurationException("`model` must either be an instance of OptimizedModule or LightningModule")
    context = getattr(module, "_compiler_ctx", None)
    if context is not None:
        for name in _COMPILED_METHODS:
            setattr(module, name, context[f"original_{name}"])
        module._compiler_ctx = None  # type: ignore[assignment]
    return module
