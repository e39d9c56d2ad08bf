"""Gradient accumulation that changes with the epoch: Lightning's ``GradientAccumulationScheduler``.

The callback sets ``trainer.accumulate_grad_batches`` at each training epoch's start; the fit loop reads the
value once per epoch (right after ``on_train_epoch_start``), so a fit without the callback pays nothing per step.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch

from ..errors import MisconfigurationException
from ..overrides import overrides
from .base import Callback

__all__ = ["AccumulationNotSupported", "EmptyScheduling", "GradientAccumulationScheduler"]


class EmptyScheduling(MisconfigurationException, TypeError):
    """``scheduling={}``: a ``TypeError`` as in Lightning, and accelplug's configuration error."""


class AccumulationNotSupported(MisconfigurationException, RuntimeError):
    """The run cannot change its accumulation (manual optimization): a ``RuntimeError`` as in Lightning."""


class GradientAccumulationScheduler(Callback):
    """Accumulate ``scheduling[epoch]`` batches per optimizer step from that epoch on (epochs count from 0; before
    the first key, 1)."""

    def __init__(self, scheduling: dict[int, int]) -> None:
        super().__init__()
        if not isinstance(scheduling, dict):
            raise MisconfigurationException(
                f"scheduling={scheduling!r} is not accepted: a dict {{epoch: accumulation factor}}, e.g. {{4: 2}}."
            )
        if not scheduling:
            raise EmptyScheduling("scheduling={} is empty: give at least one {epoch: accumulation factor} entry.")
        if any(isinstance(k, bool) or not isinstance(k, int) or k < 0 for k in scheduling):
            raise MisconfigurationException(
                f"Epoch should be an int greater than or equal to 0. Got {list(scheduling.keys())}."
            )
        if any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in scheduling.values()):
            raise MisconfigurationException(
                f"Accumulation factor should be an int greater than 0. Got {list(scheduling.values())}."
            )
        scheduling = dict(scheduling)
        scheduling.setdefault(0, 1)
        self.scheduling = scheduling
        self.epochs = sorted(scheduling)

    def going_to_accumulate_grad_batches(self) -> bool:
        return any(factor > 1 for factor in self.scheduling.values())

    def get_accumulate_grad_batches(self, epoch: int) -> int:
        """The factor of the last scheduled epoch at or before ``epoch``."""
        factor = 1
        for start in self.epochs:
            if epoch >= start:
                factor = self.scheduling[start]
        return factor

    def on_train_start(self, trainer: Any, pl_module: torch.nn.Module) -> None:
        if not getattr(pl_module, "automatic_optimization", True):
            raise AccumulationNotSupported(
                "Automatic gradient accumulation and the `GradientAccumulationScheduler` is not supported for manual"
                " optimization. Please remove the callback or switch to automatic optimization."
            )
        own_steps = overrides(pl_module, "optimizer_step") or overrides(pl_module, "optimizer_zero_grad")
        if own_steps and self.going_to_accumulate_grad_batches():
            warnings.warn(
                "When using `Trainer(accumulate_grad_batches != 1)` and overriding"
                " `LightningModule.optimizer_{step,zero_grad}`, the hooks will not be called on every batch"
                " (rather, they are called on every optimization step).",
                stacklevel=2,
            )
        if trainer.accumulate_grad_batches != 1:
            raise MisconfigurationException(
                "You have set `accumulate_grad_batches` and are using the `GradientAccumulationScheduler` callback: "
                f"Trainer(accumulate_grad_batches={trainer.accumulate_grad_batches}) and the callback both set the "
                "accumulation. Either remove `accumulate_grad_batches` from the Trainer or remove the callback."
            )

    def on_train_epoch_start(self, trainer: Any, *_: Any) -> None:
        trainer.accumulate_grad_batches = self.get_accumulate_grad_batches(trainer.current_epoch)
