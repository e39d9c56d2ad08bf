"""The contexts ``fabric.init_module``, ``fabric.init_tensor`` and ``Trainer.init_module`` open (through the
strategy's ``module_init_context`` and ``tensor_init_context``, Lightning's names): create on the device, in the
precision.

A model built inside ``init_module()`` has its parameters on the run's device and in the precision's dtype
from the start (no float32 copy on the CPU first). With ``empty_init=True`` the ``torch.nn.init`` functions are
skipped (the values are whatever memory held: only for weights a checkpoint overwrites), and under FSDP the
model is built on the meta device and gets real, sharded storage when ``setup`` shards it.
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

__all__ = ["SkipInit", "module_init_context", "tensor_init_context"]


class SkipInit(TorchFunctionMode):
    """``torch.nn.init.*`` calls return their tensor untouched (no random draws, no writes)."""

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if getattr(func, "__module__", None) == "torch.nn.init":
            return kwargs["tensor"] if "tensor" in kwargs else args[0]
        return func(*args, **kwargs)


def tensor_init_context(
    device: torch.device | None, precision: Any, *, empty_init: bool | None = None
) -> contextlib.ExitStack:
    """Tensors made inside land on ``device`` (None: where torch puts them) in ``precision``'s dtype;
    ``empty_init`` skips ``torch.nn.init`` (Lightning's ``strategy.tensor_init_context(empty_init=True)``)."""
    stack = contextlib.ExitStack()
    if device is not None:
        stack.enter_context(device)
    if empty_init:
        stack.enter_context(SkipInit())
    if precision is not None:
        stack.enter_context(precision.tensor_init_context())
    return stack


def module_init_context(
    device: torch.device | None,
    precision: Any,
    *,
    sharded: bool,
    empty_init: bool | None,
    module_hook: bool = False,
) -> contextlib.ExitStack:
    """A module built inside is made on ``device`` in ``precision``'s dtype (on the meta device when it is
    ``sharded`` and ``empty_init``); ``empty_init`` skips ``torch.nn.init``. ``module_hook``: a precision plugin's
    ``module_init_context`` gives the dtype (Lightning Fabric's ``init_module``), not its ``tensor_init_context``."""
    stack = contextlib.ExitStack()
    if sharded:
        if empty_init:
            stack.enter_context(torch.device("meta"))  # materialised shard by shard in setup
    else:
        if device is not None:
            stack.enter_context(device)
        if empty_init:
            stack.enter_context(SkipInit())
    if precision is not None:
        hook = getattr(precision, "module_init_context", None) if module_hook else None
        stack.enter_context(hook() if callable(hook) else precision.tensor_init_context())
    return stack
