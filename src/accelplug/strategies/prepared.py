"""What preparing a module gives the loop: the user's module, the callable a training step runs, the optimizers.

A leaf below :mod:`.base` (the preparation order) and :mod:`.compiling` (where ``torch.compile`` enters
it): both need these, and neither needs the other's module to say what a prepared module is.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import torch

from .._record import record

if TYPE_CHECKING:
    from .optimizers import OptimizerSetup

__all__ = ["PreparedModule", "StepRouter", "training_step_caller"]


@record
class PreparedModule:
    """The result of preparing a module for a run.

    ``module`` is the user's own object (its ``state_dict`` has the user's keys); ``step_module`` is
    what the training loop calls as ``step_module(batch, batch_idx)`` (the user's ``training_step``,
    possibly wrapped by DDP and compiled). ``optim`` is None when optimizers were not asked for.
    """

    module: torch.nn.Module
    step_module: Callable[[Any, int], Any]
    wrapped: torch.nn.Module | None = None
    optim: OptimizerSetup | None = None
    #: The modules whose forward ``torch.compile`` compiled (the fit loop times the first step, once,
    #: and warns when none of them ran in it: a ``training_step`` that never calls ``self(...)``).
    compiled_modules: tuple[torch.nn.Module, ...] = ()
    #: The :class:`StepRouter` inside ``wrapped``, when the strategy wrapped one (DDP does).
    router: StepRouter | None = None

    @property
    def compiled(self) -> bool:
        return bool(self.compiled_modules)

    def call(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``method(*args, **kwargs)`` (the module's forward or another of its methods) run inside the
        strategy's wrapper, so DDP's gradient hooks see the computation (what Fabric's module calls).

        Without a router (one device, or FSDP, whose hooks sit on the module itself) it is a plain call.
        """
        if self.router is None or self.wrapped is None:
            return method(*args, **kwargs)
        with self.router.routed(method):
            return self.wrapped(*args, **kwargs)


def training_step_caller(module: torch.nn.Module) -> Callable[[Any, int], Any]:
    """``module.training_step`` as a ``(batch, batch_idx)`` callable, also for ``training_step(self, batch)``.

    A module without one (a plain ``nn.Module`` given to Fabric) gets its own ``__call__`` (its forward):
    the Trainer checks for ``training_step`` before it prepares anything.
    """
    step: Callable[..., Any] | None = getattr(module, "training_step", None)
    if not callable(step):
        return module.__call__
    try:
        parameters = list(inspect.signature(inspect.unwrap(step)).parameters.values())  # FSDP wraps it
    except (TypeError, ValueError):
        return step
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind == p.VAR_POSITIONAL for p in parameters) or len(positional) >= 2:
        return step

    def without_index(batch: Any, batch_idx: int) -> Any:
        return step(batch)

    return without_index


class StepRouter(torch.nn.Module):
    """An ``nn.Module`` whose forward is the user's ``training_step``, so DDP's and FSDP's forward hooks
    (and ``torch.compile``) see the real computation rather than a bare ``forward``.

    :meth:`routed` points it at another method for one call: Fabric runs the module's ``forward`` (or a
    method marked with ``mark_forward_method``) through the same wrapper.
    """

    def __init__(self, module: torch.nn.Module) -> None:
        super().__init__()
        self.module = module
        self._step = training_step_caller(module)
        self._route: Callable[..., Any] | None = None

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        route = self._route
        if route is not None:
            return route(*args, **kwargs)
        return self._step(*args, **kwargs)

    @contextlib.contextmanager
    def routed(self, method: Callable[..., Any]) -> Iterator[None]:
        previous, self._route = self._route, method
        try:
            yield
        finally:
            self._route = previous
