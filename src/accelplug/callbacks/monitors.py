"""Callbacks that report on the run: learning rates and device statistics, written to the loggers.

``DeviceStatsMonitor`` is where ``Accelerator.get_device_stats()`` is consumed: at each logging step
it asks the run's accelerator for its figures (CUDA memory, CPU peak RSS, a plugin's own) and logs them.
"""

from __future__ import annotations

from typing import Any

from ..errors import MisconfigurationException
from .base import Callback

__all__ = ["DeviceStatsMonitor", "LearningRateMonitor"]


def _log(trainer: Any, metrics: dict[str, float]) -> None:
    if not metrics or not trainer.is_global_zero:
        return
    for logger in trainer.loggers:
        logger.log_metrics(metrics, trainer.global_step)
    trainer.state.logged_metrics.update(metrics)


class LearningRateMonitor(Callback):
    """Logs ``lr-<Optimizer>`` (and ``/pg<N>`` for each extra parameter group) every logging step or epoch."""

    def __init__(
        self, logging_interval: str | None = None, log_momentum: bool = False, log_weight_decay: bool = False
    ) -> None:
        if logging_interval not in (None, "step", "epoch"):
            raise MisconfigurationException(
                f"LearningRateMonitor(logging_interval={logging_interval!r}) is invalid: use None, 'step' or 'epoch'."
            )
        self.logging_interval = logging_interval
        self.log_momentum = log_momentum
        self.log_weight_decay = log_weight_decay

    def _values(self, trainer: Any) -> dict[str, float]:
        values: dict[str, float] = {}
        seen: dict[str, int] = {}
        for optimizer in trainer.optimizers:
            base = f"lr-{type(optimizer).__name__}"
            count = seen.get(base, 0)
            seen[base] = count + 1
            name = base if count == 0 else f"{base}-{count}"
            for index, group in enumerate(optimizer.param_groups):
                key = name if index == 0 else f"{name}/pg{index + 1}"
                values[key] = float(group["lr"])
                if self.log_momentum and "momentum" in group:
                    values[f"{key}-momentum"] = float(group["momentum"])
                if self.log_momentum and "betas" in group:
                    values[f"{key}-momentum"] = float(group["betas"][0])
                if self.log_weight_decay and "weight_decay" in group:
                    values[f"{key}-weight_decay"] = float(group["weight_decay"])
        return values

    def on_train_batch_start(self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int) -> None:
        if self.logging_interval == "epoch":
            return
        if trainer.global_step % trainer.options.log_every_n_steps == 0:
            _log(trainer, self._values(trainer))

    def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
        if self.logging_interval != "step":
            _log(trainer, self._values(trainer))


class DeviceStatsMonitor(Callback):
    """Logs the accelerator's ``get_device_stats()`` every logging step (prefixed with the accelerator name)."""

    def __init__(self, cpu_stats: bool | None = None) -> None:
        self.cpu_stats = cpu_stats

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
        if trainer.global_step % trainer.options.log_every_n_steps:
            return
        stats = trainer.accelerator.get_device_stats(trainer.root_device)
        prefix = trainer.accelerator.name
        _log(trainer, {f"{prefix}/{k}": float(v) for k, v in stats.items()})
