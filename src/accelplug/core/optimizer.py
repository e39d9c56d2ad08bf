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
from typing import Any, ClassVar

import torch

from ..errors import MisconfigurationException

__all__ = ["LightningOptimizer", "OptimizerWrapper", "StepFunction", "do_nothing_closure"]

#: A runner's step for one optimizer: ``step(optimizer, closure, **kwargs)``.
StepFunction = Callable[..., Any]


def do_nothing_closure() -> None:
    """The closure a step gets when its caller passed none: it computes nothing."""
    return None


class OptimizerWrapper:
    """What the optimizer wrappers share (:class:`LightningOptimizer`, Fabric's ``FabricOptimizer``): the wrapper
    is also an instance of the wrapped optimizer's class (``isinstance(opt, torch.optim.SGD)`` holds, as in
    Lightning: a class ``<prefix><Optimizer>`` deriving from both), ``zero_grad`` and the state calls go to the
    wrapped optimizer, and every other attribute is read from it. Subclasses give ``step``."""

    #: The start of the combined class's name (Lightning's: ``LightningSGD``, ``FabricSGD``).
    class_prefix: ClassVar[str] = ""
    #: The wrapper's own attributes, set on it and never read from the wrapped optimizer.
    own_attributes: ClassVar[tuple[str, ...]] = ("_optimizer",)
    _combined: ClassVar[dict[tuple[type, type], type]] = {}
    _optimizer: torch.optim.Optimizer

    def _wrap(self, optimizer: torch.optim.Optimizer, **own: Any) -> None:
        # set through object's __setattr__: the combined class inherits the optimizer's, whose __setattr__ (if
        # any) must not see the wrapper's own attributes
        object.__setattr__(self, "_optimizer", optimizer)
        for name, value in own.items():
            object.__setattr__(self, name, value)
        wrapper, cls = type(self), type(optimizer)
        if not issubclass(wrapper, cls):
            key = (wrapper, cls)
            if key not in OptimizerWrapper._combined:
                name = f"{wrapper.class_prefix}{cls.__name__}"
                OptimizerWrapper._combined[key] = type(name, (wrapper, cls), {"__module__": wrapper.__module__})
            self.__class__ = OptimizerWrapper._combined[key]

    @property
    def optimizer(self) -> torch.optim.Optimizer:
        """The torch optimizer this wraps."""
        return self._optimizer

    def zero_grad(self, set_to_none: bool = True) -> None:
        self._optimizer.zero_grad(set_to_none=set_to_none)

    def state_dict(self) -> dict[str, Any]:
        return self._optimizer.state_dict()

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self._optimizer.load_state_dict(state_dict)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        self._optimizer.add_param_group(param_group)

    def __getattr__(self, name: str) -> Any:
        if name in type(self).own_attributes:
            raise AttributeError(name)  # not yet set (unpickling): never recurse into the wrapped optimizer
        return getattr(self._optimizer, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._optimizer!r})"


class LightningOptimizer(OptimizerWrapper):
    """A torch optimizer as a LightningModule's steps see it.

    Built from any ``torch.optim.Optimizer``; the instance is also an instance of that optimizer's class.
    """

    class_prefix = "Lightning"
    own_attributes = ("_optimizer", "_step_function", "_module")
    _step_function: StepFunction | None
    _module: Any

    def __init__(self, optimizer: torch.optim.Optimizer | LightningOptimizer) -> None:
        if isinstance(optimizer, LightningOptimizer):
            optimizer = optimizer.optimizer
        self._wrap(optimizer, _step_function=None, _module=None)

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
