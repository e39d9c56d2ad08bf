"""``LightningOptimizer``: the optimizer a LightningModule gets back from ``self.optimizers()``.

Lightning's public wrapper class, so that ``isinstance(opt, LightningOptimizer)`` holds for what
``self.optimizers()`` returns, as it does for ``isinstance(opt, torch.optim.SGD)`` when the wrapped optimizer
is an SGD: each wrapper's class is made a subclass of both (the way Lightning documents it). Everything but
``step`` is the wrapped optimizer's own (attributes are read through). ``step`` without a Trainer steps the
wrapped optimizer; during a fit the Trainer's loop hands the wrapper the step it should take (the precision,
the ``on_before_optimizer_step`` hooks, clipping and counting) through :meth:`LightningOptimizer._attach`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch

from ..errors import MisconfigurationException

__all__ = ["LightningOptimizer", "StepFunction", "do_nothing_closure"]

#: A runner's step for one optimizer: ``step(optimizer, closure, **kwargs)``.
StepFunction = Callable[..., Any]


def do_nothing_closure() -> None:
    """The closure a step gets when its caller passed none: it computes nothing."""
    return None


class LightningOptimizer:
    """A torch optimizer as a LightningModule's steps see it.

    Built from any ``torch.optim.Optimizer``; the instance is also an instance of that optimizer's class.
    """

    _optimizer: torch.optim.Optimizer
    _step_function: StepFunction | None
    _module: Any

    def __init__(self, optimizer: torch.optim.Optimizer | LightningOptimizer) -> None:
        if isinstance(optimizer, LightningOptimizer):
            optimizer = optimizer.optimizer
        # set through object's __setattr__: the class below inherits the optimizer's, and reads go through
        # __getattr__ to the wrapped optimizer, so only these three live on the wrapper itself
        object.__setattr__(self, "_optimizer", optimizer)
        object.__setattr__(self, "_step_function", None)
        object.__setattr__(self, "_module", None)
        wrapper = type(self)
        if not issubclass(wrapper, type(optimizer)):
            name = f"Lightning{type(optimizer).__name__}"
            self.__class__ = type(name, (wrapper, type(optimizer)), {"__module__": wrapper.__module__})

    @property
    def optimizer(self) -> torch.optim.Optimizer:
        """The torch optimizer this wraps."""
        return self._optimizer

    def _attach(self, step: StepFunction | None, module: Any = None) -> None:
        """What a runner calls: ``step`` replaces the plain optimizer step (None: back to it)."""
        object.__setattr__(self, "_step_function", step)
        object.__setattr__(self, "_module", module)

    def step(self, closure: Callable[[], Any] | None = None, **kwargs: Any) -> Any:
        """One optimizer step; returns what the closure returned (None without one)."""
        if closure is not None and not callable(closure):
            raise MisconfigurationException(
                f"When `optimizer.step(closure)` is called, the closure should be callable; got {closure!r}."
            )
        if self._step_function is not None:
            return self._step_function(self._optimizer, closure, **kwargs)
        return self._optimizer.step(closure, **kwargs) if closure is not None else self._optimizer.step(**kwargs)

    def zero_grad(self, set_to_none: bool = True) -> None:
        self._optimizer.zero_grad(set_to_none=set_to_none)

    def state_dict(self) -> dict[str, Any]:
        return self._optimizer.state_dict()

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self._optimizer.load_state_dict(state_dict)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        self._optimizer.add_param_group(param_group)

    @contextmanager
    def toggle_model(self, sync_grad: bool = True) -> Iterator[None]:
        """Within the block, only this optimizer's parameters require gradients (the module's
        ``toggle_optimizer``); ``sync_grad`` is Lightning's hint for skipping gradient synchronisation while
        accumulating, which accelplug's strategies decide by themselves."""
        module = self._module
        if module is None:
            raise RuntimeError("`toggle_model` needs the optimizer of a running fit: use it inside training_step.")
        module.toggle_optimizer(self)
        try:
            yield
        finally:
            module.untoggle_optimizer(self)

    def __getattr__(self, name: str) -> Any:
        if name in ("_optimizer", "_step_function", "_module"):
            raise AttributeError(name)  # not yet set (unpickling): never recurse into the wrapped optimizer
        return getattr(self._optimizer, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._optimizer!r})"
