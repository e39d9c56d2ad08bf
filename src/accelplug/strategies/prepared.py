"""What preparing a module gives the loop: the user's module, the callable a training step runs, the optimizers.

A leaf below :mod:`.base` (the preparation order) and :mod:`.compiling` (where ``torch.compile`` enters
it): both need these, and neither needs the other's module to say what a prepared module is.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from ..optimizers import OptimizerSetup

__all__ = ["PreparedModule", "StepRouter", "training_step_caller"]


@dataclass
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

    @property
    def compiled(self) -> bool:
        return bool(self.compiled_modules)


def training_step_caller(module: torch.nn.Module) -> Callable[[Any, int], Any]:
    """``module.training_step`` as a ``(batch, batch_idx)`` callable, also for ``training_step(self, batch)``."""
    step: Callable[..., Any] = module.training_step  # type: ignore[assignment]
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
    (and ``torch.compile``) see the real computation rather than a bare ``forward``."""

    def __init__(self, module: torch.nn.Module) -> None:
        super().__init__()
        self.module = module
        self._step = training_step_caller(module)

    def forward(self, batch: Any, batch_idx: int) -> Any:
        return self._step(batch, batch_idx)
