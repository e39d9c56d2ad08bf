"""The optimizers a module sees through ``self.optimizers()``: Lightning's ``LightningOptimizer`` role.

``step`` goes through the Trainer's precision (a gradient scaler), the ``on_before_optimizer_step`` hooks
and clipping, and is counted as an optimizer step in manual optimization; everything else is the torch
optimizer's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

__all__ = ["ManagedOptimizer", "StepFunction"]

#: The loop's step for one optimizer: ``step(optimizer, closure)`` (precision, hooks, clipping, counting).
StepFunction = Callable[[torch.optim.Optimizer, Callable[[], Any] | None], Any]


class ManagedOptimizer:
    """A torch optimizer as the module sees it: ``step`` runs through the precision and is counted."""

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        *,
        step: Callable[[torch.optim.Optimizer, Callable[[], Any] | None], Any],
    ) -> None:
        self._optimizer = optimizer
        self._step = step  # the loop's precision-aware step, handed over (this module never imports the loop)

    @property
    def optimizer(self) -> torch.optim.Optimizer:
        return self._optimizer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._optimizer, name)

    def step(self, closure: Callable[[], Any] | None = None, **kwargs: Any) -> Any:
        return self._step(self._optimizer, closure)

    def zero_grad(self, set_to_none: bool = True) -> None:
        self._optimizer.zero_grad(set_to_none=set_to_none)

    def __repr__(self) -> str:
        return f"ManagedOptimizer({self._optimizer!r})"
