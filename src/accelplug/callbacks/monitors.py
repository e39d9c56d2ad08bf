"""Callbacks that report on the run: learning rates and device statistics, written to the loggers.

``DeviceStatsMonitor`` is where ``Accelerator.get_device_stats()`` is consumed: around the batches of each logging
step it asks the run's accelerator for its figures (CUDA memory, the CPU's load and peak RSS, a plugin's own) and
logs them under Lightning's keys.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch

from ..errors import MisconfigurationException, did_you_mean
from .base import Callback

__all__ = ["DeviceStatsMonitor", "LearningRateMonitor"]


def _log(trainer: Any, metrics: dict[str, float]) -> None:
    if not metrics or not trainer.is_global_zero:
        return
    for logger in trainer.loggers:  # at Lightning's step for these rows: the count of batches that stepped
        logger.log_metrics(metrics, trainer.state.log_step)


class LearningRateMonitor(Callback):
    """Logs each optimizer's learning rate (and momentum, weight decay) under Lightning's names.

    Names: ``lr-<Optimizer>`` (a scheduler's ``name`` when it has one), ``-1``, ``-2``... for further optimizers
    of the same type, ``/pg<N>`` or ``/<group name>`` per parameter group when there are several, and
    ``-momentum``/``-weight_decay`` after a name. With ``logging_interval=None`` an optimizer is logged when its
    scheduler steps (per step or per epoch); one without a scheduler at every logging step and every epoch start.
    """

    def __init__(
        self, logging_interval: str | None = None, log_momentum: bool = False, log_weight_decay: bool = False
    ) -> None:
        if logging_interval not in (None, "step", "epoch"):
            raise MisconfigurationException(
                f"LearningRateMonitor(logging_interval={logging_interval!r}) is invalid: use None, 'step' or 'epoch'."
                f"{did_you_mean(logging_interval, ('step', 'epoch'))}"
            )
        self.logging_interval = logging_interval
        self.log_momentum = log_momentum
        self.log_weight_decay = log_weight_decay
        self.lrs: dict[str, list[float]] = {}
        self.last_momentum_values: dict[str, float | None] = {}
        self.last_weight_decay_values: dict[str, float | None] = {}

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        if not trainer.loggers:
            raise MisconfigurationException(
                "Cannot use `LearningRateMonitor` callback with `Trainer` that has no logger: it needs one to write "
                "to (logger=False here). Pass logger=True or a logger object, or remove the callback."
            )
        if self.log_momentum and not all(
            "momentum" in o.defaults or "betas" in o.defaults for o in self._all_optimizers(trainer)
        ):
            warnings.warn(
                "LearningRateMonitor(log_momentum=True), but some optimizers do not have momentum. 0 is logged.",
                RuntimeWarning,
                stacklevel=2,
            )
        names = [name for _, group_names in self._named(trainer) for name in group_names]
        self.lrs = {name: [] for name in names}
        self.last_momentum_values = {f"{name}-momentum": None for name in names}
        self.last_weight_decay_values = {f"{name}-weight_decay": None for name in names}

    def on_train_batch_start(self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int) -> None:
        # Lightning's logging cadence: every n-th batch that steps (not optimizer step: several optimizers step in
        # one batch), or when the fit is stopping; never with log_every_n_steps=0
        every = trainer.log_every_n_steps
        if not every or ((trainer.state.log_step + 1) % every != 0 and not trainer.should_stop):
            return
        if self.logging_interval != "epoch":
            self._log_stats(trainer, "step" if self.logging_interval is None else "any")

    def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
        if self.logging_interval != "step":
            self._log_stats(trainer, "epoch" if self.logging_interval is None else "any")

    # ---- names and values -------------------------------------------------------------------------------
    @staticmethod
    def _all_optimizers(trainer: Any) -> list[Any]:
        return [getattr(o, "optimizer", o) for o in trainer.optimizers]

    def _named(self, trainer: Any) -> list[tuple[Any, list[str]]]:
        """(optimizer, one name per parameter group, scheduler interval or None), schedulers' optimizers first."""
        named: list[tuple[Any, list[str]]] = []
        seen: list[Any] = []
        per_type: dict[type, int] = {}
        for config in trainer.lr_scheduler_configs:
            optimizer = config.scheduler.optimizer
            base = config.name if config.name is not None else f"lr-{type(optimizer).__name__}"
            named.append((optimizer, self._group_names(optimizer, base, seen, per_type, counted=config.name is None)))
        for optimizer in self._all_optimizers(trainer):
            if any(optimizer is s for s in seen):
                continue
            named.append((optimizer, self._group_names(optimizer, f"lr-{type(optimizer).__name__}", seen, per_type)))
        return named

    @staticmethod
    def _group_names(
        optimizer: Any, base: str, seen: list[Any], per_type: dict[type, int], counted: bool = True
    ) -> list[str]:
        seen.append(optimizer)
        kind = type(optimizer)
        if counted:
            per_type[kind] = per_type.get(kind, 0) + 1
        groups = optimizer.param_groups
        labels = [g.get("name", f"pg{i}") for i, g in enumerate(groups, start=1)]
        repeated = sorted({label for label in labels if labels.count(label) > 1})
        if repeated:
            raise MisconfigurationException(
                f"A single `Optimizer` cannot have multiple parameter groups with identical `name` values: {base} has "
                f"{repeated} more than once; give each parameter group of one optimizer its own 'name'."
            )
        if kind in per_type and per_type[kind] > 1:
            base = f"{base}-{per_type[kind] - 1}"
        if len(groups) > 1:
            return [f"{base}/{label}" for label in labels]
        only = groups[0].get("name")
        return [f"{base}/{only}" if only else base]

    def _rename_grown(self, names: list[str]) -> None:
        """An optimizer that had one parameter group and now has several (a finetuning callback added one): its
        history moves from ``lr-SGD`` to ``lr-SGD/pg1``, and the new groups' names join, as Lightning keeps them."""
        for name in names:
            old = name.replace("/pg1", "")
            if "/pg1" in name and old in self.lrs:
                self.lrs[name] = self.lrs.pop(old)
            elif name not in self.lrs:
                self.lrs[name] = []

    def _log_stats(self, trainer: Any, interval: str) -> None:
        stats: dict[str, float] = {}
        intervals = {id(c.scheduler.optimizer): c.interval for c in trainer.lr_scheduler_configs}
        named = self._named(trainer)
        self._rename_grown([name for _, names in named for name in names])
        for optimizer, names in named:
            scheduled = intervals.get(id(optimizer))
            if scheduled is not None and interval not in (scheduled, "any"):
                continue
            stats.update(self._optimizer_stats(optimizer, names))
        if not stats:
            return
        for name, value in stats.items():
            trainer.callback_metrics[name] = torch.tensor(value)
        _log(trainer, stats)

    def _optimizer_stats(self, optimizer: Any, names: list[str]) -> dict[str, float]:
        stats: dict[str, float] = {}
        betas = "betas" in optimizer.defaults
        for group, name in zip(optimizer.param_groups, names, strict=False):
            stats[name] = group["lr"]
            self.lrs.setdefault(name, []).append(group["lr"])
            if self.log_momentum:
                momentum = group["betas"][0] if betas else group.get("momentum", 0)
                stats[f"{name}-momentum"] = self.last_momentum_values[f"{name}-momentum"] = momentum
            if self.log_weight_decay:
                decay = group["weight_decay"]
                stats[f"{name}-weight_decay"] = self.last_weight_decay_values[f"{name}-weight_decay"] = decay
        return stats


class DeviceStatsMonitor(Callback):
    """Logs the accelerator's ``get_device_stats()`` around each training, validation and test batch, as Lightning's.

    Keys are ``DeviceStatsMonitor.<hook>`` and the stat's name, joined by each logger's ``group_separator``
    (``DeviceStatsMonitor.on_train_batch_start/cpu_percent``), at the logger step of the batches that stepped; only
    where Lightning updates the logs (every ``log_every_n_steps``-th batch, or when the fit is stopping).
    ``cpu_stats``: None logs the CPU's figures (:func:`~accelplug.accelerators.cpu.get_cpu_stats`, psutil) when the
    run is on the CPU; True adds them to another accelerator's; False logs nothing on the CPU.
    """

    def __init__(self, cpu_stats: bool | None = None) -> None:
        self._cpu_stats = cpu_stats
        #: batches started in the running validation or test (Lightning's evaluation ``batch_progress`` count)
        self._evaluated = 0

    def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
        if stage != "fit":
            return
        if not trainer.loggers:
            raise MisconfigurationException(
                "Cannot use `DeviceStatsMonitor` callback with `Trainer(logger=False)`: it writes to the loggers. "
                "Pass a logger (the default one, or e.g. logger=CSVLogger('logs')), or drop the callback."
            )
        if self._cpu_stats is None and trainer.strategy.root_device.type == "cpu":
            from ..accelerators.cpu import get_cpu_stats

            try:
                get_cpu_stats()  # at setup rather than at the first batch
            except ModuleNotFoundError:
                raise ModuleNotFoundError(
                    "`DeviceStatsMonitor` cannot log CPU stats as `psutil` is not installed: pip install psutil, or "
                    "pass DeviceStatsMonitor(cpu_stats=False) to log none on the CPU."
                ) from None

    def _log_device_stats(self, trainer: Any, hook: str) -> None:
        stepped = trainer.state.log_step  # Lightning's _batches_that_stepped now (the current batch not yet counted)
        # Lightning's should_update_logs: training counts the batches that stepped, evaluation its own batches
        count = stepped + 1 if hook.startswith("on_train") else self._evaluated
        every = trainer.log_every_n_steps
        if not every or (count % every and not trainer.should_stop):
            return
        device = trainer.strategy.root_device
        if self._cpu_stats is False and device.type == "cpu":
            return
        stats = dict(trainer.accelerator.get_device_stats(device))
        if self._cpu_stats and device.type != "cpu":
            from ..accelerators.cpu import get_cpu_stats

            stats.update(get_cpu_stats())
        if not stats or not trainer.is_global_zero:
            return
        for logger in trainer.loggers:
            separator = getattr(logger, "group_separator", "/")
            logger.log_metrics(_prefix_metric_keys(stats, f"{type(self).__qualname__}.{hook}", separator), step=stepped)

    def on_train_batch_start(self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int) -> None:
        self._log_device_stats(trainer, "on_train_batch_start")

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
        self._log_device_stats(trainer, "on_train_batch_end")

    def on_validation_start(self, trainer: Any, pl_module: Any) -> None:
        self._evaluated = 0

    def on_test_start(self, trainer: Any, pl_module: Any) -> None:
        self._evaluated = 0

    def on_validation_batch_start(
        self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        self._evaluated += 1
        self._log_device_stats(trainer, "on_validation_batch_start")

    def on_validation_batch_end(
        self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        self._log_device_stats(trainer, "on_validation_batch_end")

    def on_test_batch_start(
        self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        self._evaluated += 1
        self._log_device_stats(trainer, "on_test_batch_start")

    def on_test_batch_end(
        self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        self._log_device_stats(trainer, "on_test_batch_end")


def _prefix_metric_keys(metrics: dict[str, float], prefix: str, separator: str) -> dict[str, float]:
    """``metrics`` with each key under ``prefix`` (``prefix + separator + key``), the monitor's logged names."""
    return {f"{prefix}{separator}{key}": value for key, value in metrics.items()}
