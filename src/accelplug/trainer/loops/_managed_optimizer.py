"""The optimizers a module sees through ``self.optimizers()``: Lightning's ``LightningOptimizer`` role.

``step`` goes through the Trainer's precision (a gradient scaler), the ``on_before_optimizer_step`` hooks
and clipping, and is counted as an optimizer step in manual optimization; everything else is the torch
optimizer's own.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

import torch

from ...core.optimizer import LightningOptimizer

__all__ = ["ManagedOptimizer", "StepFunction"]

#: The loop's step for one optimizer: ``step(optimizer, closure)`` (precision, hooks, clipping, counting).
StepFunction = Callable[[torch.optim.Optimizer, Callable[[], Any] | None], Any]


class ManagedOptimizer(LightningOptimizer):
    """A torch optimizer as the module sees it: ``step`` runs through the precision and is counted.

    A :class:`~accelplug.core.optimizer.LightningOptimizer` (so also an instance of the wrapped optimizer's class).
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        *,
        step: Callable[[torch.optim.Optimizer, Callable[[], Any] | None], Any],
        module: Any = None,
    ) -> None:
        super().__init__(optimizer)
        self._attach(None, module)  # the module whose parameters ``toggle_model`` toggles
        self._step = step  # the loop's precision-aware step, handed over (this module never imports the loop)

    def step(self, closure: Callable[[], Any] | None = None, **kwargs: Any) -> Any:
        """The loop's step; extra arguments (``opt.step(closure, optim="sgd")``) reach the optimizer's own ``step``,
        as in Lightning, rather than being dropped."""
        if not kwargs:
            return self._step(self._optimizer, closure)
        with _step_arguments(self._optimizer, kwargs):
            return self._step(self._optimizer, closure)

    def __repr__(self) -> str:
        return f"ManagedOptimizer({self._optimizer!r})"


@contextlib.contextmanager
def _step_arguments(optimizer: torch.optim.Optimizer, kwargs: dict[str, Any]) -> Iterator[None]:
    """For one step, ``optimizer.step`` takes ``kwargs`` too: the precision and the strategy call
    ``optimizer.step(closure)`` (a gradient scaler among them) and have no room for a user's arguments, so they are
    bound to the optimizer's own step for the duration and the instance is left as it was."""
    had_own = "step" in vars(optimizer)
    original = optimizer.step
    optimizer.step = functools.partial(original, **kwargs)  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        if had_own:
            optimizer.step = original  # type: ignore[method-assign]
        else:
            del optimizer.step
