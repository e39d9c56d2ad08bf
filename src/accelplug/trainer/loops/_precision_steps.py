"""The optimisation step as a Lightning precision plugin drives it, when a subclass rewrote a step method.

A plugin that rewrites ``optimizer_step``, ``backward``, ``pre_backward``... is handed the step in Lightning's
order: ``pre_backward`` (the loss scaled, ``on_before_backward``), ``backward`` (the module's ``backward``),
``post_backward`` (``on_after_backward``), and ``optimizer_step(optimizer, model, closure)``, whose closure is
followed by ``on_before_optimizer_step`` and clipping. :class:`PluginSteps` is what the plugin reaches the loop
through (:class:`accelplug.precision.lightning.base.PrecisionLoop`); the optimisation uses it only for such a plugin,
so every other run keeps its own path.
"""

from __future__ import annotations

import contextlib
from functools import partial
from typing import Any

import torch

from ._losses import explain_backward

__all__ = ["PluginSteps"]


class PluginSteps:
    """The loop's hooks, module backward and clipping, lent to the precision plugin for one fit."""

    def __init__(self, optimization: Any) -> None:
        self.opt = optimization  # the loop's Optimization (typed loosely: it imports this module)
        self.plugin = optimization.precision
        self.module = optimization.module

    def lent(self) -> contextlib.AbstractContextManager[Any]:
        """The plugin sees this object while the fit loop runs, and forgets it afterwards."""
        return self.plugin.attached(self)  # type: ignore[no-any-return]

    # ---- what the plugin asks of the loop (PrecisionLoop) ----------------------------------------------
    def call_hook(self, name: str, *args: Any) -> None:
        self.opt.hooks.call(name, *args)

    def module_backward(self, loss: torch.Tensor, *args: Any, **kwargs: Any) -> None:
        hooks = self.opt.hooks
        custom = hooks.module_hook("backward")
        if custom is not None:
            hooks.run_in("backward", partial(custom, **kwargs) if kwargs else custom, loss, *args)
        else:
            loss.backward(*args, **kwargs)  # type: ignore[no-untyped-call]

    def after_closure(self, optimizer: Any) -> None:
        self.opt._after_closure(optimizer)

    def clip(self, optimizer: Any, value: float, algorithm: str) -> None:
        self.opt.strategy.clip_gradients(self.module, optimizer, value, algorithm)

    # ---- what the loop asks of the plugin ----------------------------------------------------------------
    def backward(self, loss: torch.Tensor, step: int) -> None:
        """``pre_backward``, ``backward``, ``post_backward``; the optimizer is the one stepping (None in manual)."""
        plugin, module = self.plugin, self.module
        optimizer = self.opt.optimizers[0] if self.opt.automatic and self.opt.optimizers else None
        try:
            loss = plugin.pre_backward(loss, module)
            plugin.backward(loss, module, optimizer)
        except RuntimeError as exc:
            raise explain_backward(loss, step, exc) from exc
        plugin.post_backward(loss, module)

    def clip_gradients(self, optimizer: Any, value: float, algorithm: str) -> None:
        self.plugin.clip_gradients(optimizer, value, algorithm)
