"""``EarlyStopping``: stop fit when a monitored metric stops improving (Lightning 2.6's arguments and meaning).

The check runs at the end of each training epoch when validation runs once per epoch (Lightning's
``check_on_train_epoch_end=None`` resolved at ``setup``), else after each validation pass; never during the
sanity check or outside ``fit``. In order it stops on: a non-finite value (``check_finite``), the
``stopping_threshold`` reached, the ``divergence_threshold`` passed, or ``patience`` checks without an
improvement larger than ``min_delta``. It sets ``trainer.should_stop``, which the loop honours once
``min_epochs``/``min_steps`` are met; ``stopping_reason`` says which rule fired.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from enum import Enum
from typing import Any, ClassVar

import torch

from ..errors import MisconfigurationException, did_you_mean
from .base import Callback

__all__ = ["EarlyStopping", "EarlyStoppingReason", "MissingMonitoredMetric"]

log = logging.getLogger(__name__)


class EarlyStoppingReason(Enum):
    """Why the fit was stopped (Lightning's values, so a saved ``stopping_reason`` reads back the same)."""

    NOT_STOPPED = 0
    STOPPING_THRESHOLD = 1
    DIVERGENCE_THRESHOLD = 2
    PATIENCE_EXHAUSTED = 3
    NON_FINITE_METRIC = 4


class MissingMonitoredMetric(MisconfigurationException, RuntimeError):
    """The monitored metric was never logged (a RuntimeError too: what Lightning raises, so its handlers match)."""


class EarlyStopping(Callback):
    mode_dict: ClassVar[dict[str, Callable[..., torch.Tensor]]] = {"min": torch.lt, "max": torch.gt}
    order_dict: ClassVar[dict[str, str]] = {"min": "<", "max": ">"}

    def __init__(
        self,
        monitor: str,
        min_delta: float = 0.0,
        patience: int = 3,
        verbose: bool = False,
        mode: str = "min",
        strict: bool = True,
        check_finite: bool = True,
        stopping_threshold: float | None = None,
        divergence_threshold: float | None = None,
        check_on_train_epoch_end: bool | None = None,
        log_rank_zero_only: bool = False,
    ) -> None:
        if not isinstance(monitor, str) or not monitor:
            raise MisconfigurationException(f"EarlyStopping(monitor={monitor!r}): name the metric to watch.")
        if mode not in self.mode_dict:
            raise MisconfigurationException(
                f"EarlyStopping(mode={mode!r}) is invalid: `mode` can be {', '.join(self.mode_dict)}, got {mode}."
                f"{did_you_mean(mode, self.mode_dict)}"
            )
        if not isinstance(patience, int) or isinstance(patience, bool) or patience < 0:
            raise MisconfigurationException(f"EarlyStopping(patience={patience!r}) is invalid: use an int >= 0.")
        self.monitor = monitor
        self.min_delta = min_delta * (1 if mode == "max" else -1)
        self.patience = patience
        self.verbose = verbose
        self.mode = mode
        self.strict = strict
        self.check_finite = check_finite
        self.stopping_threshold = stopping_threshold
        self.divergence_threshold = divergence_threshold
        self.log_rank_zero_only = log_rank_zero_only
        self.wait_count = 0
        self.stopped_epoch = 0
        self.stopping_reason = EarlyStoppingReason.NOT_STOPPED
        self.stopping_reason_message: str | None = None
        self.best_score = torch.tensor(torch.inf if mode == "min" else -torch.inf)
        self._check_on_train_epoch_end = check_on_train_epoch_end

    @property
    def state_key(self) -> str:
        return self._generate_state_key(monitor=self.monitor, mode=self.mode)

    @property
    def monitor_op(self) -> Callable[..., torch.Tensor]:
        return self.mode_dict[self.mode]

    def state_dict(self) -> dict[str, Any]:
        return {
            "wait_count": self.wait_count,
            "stopped_epoch": self.stopped_epoch,
            "best_score": self.best_score,
            "patience": self.patience,
            "stopping_reason": self.stopping_reason.value,
            "stopping_reason_message": self.stopping_reason_message,
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.wait_count = state_dict["wait_count"]
        self.stopped_epoch = state_dict["stopped_epoch"]
        self.best_score = torch.as_tensor(state_dict["best_score"])
        self.patience = state_dict["patience"]
        self.stopping_reason = EarlyStoppingReason(state_dict.get("stopping_reason", 0))
        self.stopping_reason_message = state_dict.get("stopping_reason_message")

    # ---- when ---------------------------------------------------------------------------------------
    def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
        if self._check_on_train_epoch_end is None:  # validation once per epoch: check with the epoch's end
            once_per_epoch = trainer.val_check_interval == 1.0 and trainer.check_val_every_n_epoch == 1
            self._check_on_train_epoch_end = once_per_epoch

    def _should_skip_check(self, trainer: Any) -> bool:
        return bool(trainer.state.fn != "fit" or trainer.sanity_checking)

    def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        if self._check_on_train_epoch_end and not self._should_skip_check(trainer):
            self._run_early_stopping_check(trainer)

    def on_validation_end(self, trainer: Any, pl_module: Any) -> None:
        if not self._check_on_train_epoch_end and not self._should_skip_check(trainer):
            self._run_early_stopping_check(trainer)

    # ---- the check ------------------------------------------------------------------------------------
    # The three steps carry Lightning's private names, which subclasses written for Lightning override
    # (a custom criterion in ``_evaluate_stopping_criteria``, a custom skip in ``_should_skip_check``).
    def _run_early_stopping_check(self, trainer: Any) -> None:
        metrics = trainer.callback_metrics
        if trainer.fast_dev_run:
            return
        if self.monitor not in metrics:
            message = (
                f"Early stopping conditioned on metric `{self.monitor}` which is not available: "
                f"EarlyStopping(monitor={self.monitor!r}) found no metric {self.monitor!r}; logged: "
                f"{sorted(metrics)}.{did_you_mean(self.monitor, metrics)} Log it with self.log, or pass strict=False."
            )
            if self.strict:
                raise MissingMonitoredMetric(message)
            if self.verbose:
                log.warning(message)
            return
        current = torch.as_tensor(metrics[self.monitor]).detach().float().squeeze().cpu()
        stop, reason = self._evaluate_stopping_criteria(current)
        stop = bool(trainer.strategy.reduce_any(stop))  # every process stops when any one does
        trainer.should_stop = trainer.should_stop or stop
        if stop:
            self.stopped_epoch = trainer.current_epoch
            self.stopping_reason_message = reason
        if reason and self.verbose:
            self._log_info(trainer, reason, self.log_rank_zero_only)

    @staticmethod
    def _log_info(trainer: Any, message: str, log_rank_zero_only: bool) -> None:
        """``message`` at INFO, prefixed with the rank when several processes run (on rank 0 only if asked)."""
        rank = trainer.global_rank if trainer.world_size > 1 else None
        if rank is None or not log_rank_zero_only or rank == 0:
            log.info(message if rank is None else f"[rank: {rank}] {message}")

    def _evaluate_stopping_criteria(self, current: torch.Tensor) -> tuple[bool, str | None]:
        order = self.order_dict[self.mode]
        if self.check_finite and not torch.isfinite(current):
            self.stopping_reason = EarlyStoppingReason.NON_FINITE_METRIC
            return True, (
                f"Monitored metric {self.monitor} = {current} is not finite. "
                f"Previous best value was {float(self.best_score):.3f}. Signaling Trainer to stop."
            )
        if self.stopping_threshold is not None and self.monitor_op(current, self.stopping_threshold):
            self.stopping_reason = EarlyStoppingReason.STOPPING_THRESHOLD
            return True, (
                f"Stopping threshold reached: {self.monitor} = {current} {order} {self.stopping_threshold}. "
                "Signaling Trainer to stop."
            )
        if self.divergence_threshold is not None and self.monitor_op(-current, -self.divergence_threshold):
            self.stopping_reason = EarlyStoppingReason.DIVERGENCE_THRESHOLD
            return True, (
                f"Divergence threshold reached: {self.monitor} = {current} {order} {self.divergence_threshold}. "
                "Signaling Trainer to stop."
            )
        if self.monitor_op(current - self.min_delta, self.best_score):
            if torch.isfinite(self.best_score):
                reason = (
                    f"Metric {self.monitor} improved by {float(abs(self.best_score - current)):.3f} >= "
                    f"min_delta = {abs(self.min_delta)}. New best score: {float(current):.3f}"
                )
            else:
                reason = f"Metric {self.monitor} improved. New best score: {float(current):.3f}"
            self.best_score = current
            self.wait_count = 0
            return False, reason
        self.wait_count += 1
        if self.wait_count >= self.patience:
            self.stopping_reason = EarlyStoppingReason.PATIENCE_EXHAUSTED
            return True, (
                f"Monitored metric {self.monitor} did not improve in the last {self.wait_count} records. "
                f"Best score: {float(self.best_score):.3f}. Signaling Trainer to stop."
            )
        return False, None
