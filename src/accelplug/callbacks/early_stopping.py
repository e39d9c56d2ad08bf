"""``EarlyStopping``: stop fit when a monitored metric stops improving (Lightning's arguments and meaning).

The check runs after each validation pass when the fit validates, else at the end of each training
epoch; it never runs during the sanity check. It sets ``trainer.should_stop``, which the loop honours
once ``min_epochs``/``min_steps`` are met.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import MisconfigurationException
from .base import Callback

__all__ = ["EarlyStopping"]


class EarlyStopping(Callback):
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
        if mode not in ("min", "max"):
            raise MisconfigurationException(f"EarlyStopping(mode={mode!r}) is invalid: use 'min' or 'max'.")
        if not isinstance(patience, int) or isinstance(patience, bool) or patience < 0:
            raise MisconfigurationException(f"EarlyStopping(patience={patience!r}) is invalid: use an int >= 0.")
        self.monitor = monitor
        self.min_delta = abs(float(min_delta)) * (1 if mode == "max" else -1)
        self.patience = patience
        self.verbose = verbose
        self.mode = mode
        self.strict = strict
        self.check_finite = check_finite
        self.stopping_threshold = stopping_threshold
        self.divergence_threshold = divergence_threshold
        self.check_on_train_epoch_end = check_on_train_epoch_end
        self.wait_count = 0
        self.stopped_epoch = 0
        self.best_score = math.inf if mode == "min" else -math.inf
        self.stopping_reason_message: str | None = None
        self._validated = False

    @property
    def state_key(self) -> str:
        return f"EarlyStopping{{monitor={self.monitor!r}, mode={self.mode!r}}}"

    def state_dict(self) -> dict[str, Any]:
        return {
            "wait_count": self.wait_count,
            "stopped_epoch": self.stopped_epoch,
            "best_score": self.best_score,
            "patience": self.patience,
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.wait_count = int(state_dict["wait_count"])
        self.stopped_epoch = int(state_dict["stopped_epoch"])
        self.best_score = float(state_dict["best_score"])

    def on_validation_end(self, trainer: Any, pl_module: Any) -> None:
        if trainer.sanity_checking or trainer.state.fn != "fit" or self.check_on_train_epoch_end:
            return  # only validation inside fit counts (not the sanity check, not trainer.validate())
        self._validated = True
        self._check(trainer)

    def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        if self.check_on_train_epoch_end is False or (self.check_on_train_epoch_end is None and self._validated):
            return
        self._check(trainer)

    def _check(self, trainer: Any) -> None:
        metrics = trainer.callback_metrics
        if self.monitor not in metrics:
            if self.strict:
                raise MisconfigurationException(
                    f"EarlyStopping(monitor={self.monitor!r}) found no metric {self.monitor!r}; logged: "
                    f"{sorted(metrics)}. Log it with self.log, or pass strict=False."
                )
            return
        current = float(metrics[self.monitor])
        stop, reason = self._evaluate(current)
        if stop:
            self.stopped_epoch = trainer.current_epoch
            self.stopping_reason_message = reason
            trainer.should_stop = True
            if self.verbose and trainer.is_global_zero:
                print(f"EarlyStopping: {reason}")

    def _better(self, current: float, reference: float) -> bool:
        return current < reference if self.mode == "min" else current > reference

    def _evaluate(self, current: float) -> tuple[bool, str | None]:
        if self.check_finite and not math.isfinite(current):
            return True, f"{self.monitor} = {current} is not finite; stopping"
        if self.stopping_threshold is not None and self._better(current, self.stopping_threshold):
            return True, f"{self.monitor} = {current:.6g} reached the stopping threshold {self.stopping_threshold}"
        if self.divergence_threshold is not None and self._better(self.divergence_threshold, current):
            return True, f"{self.monitor} = {current:.6g} diverged past {self.divergence_threshold}"
        if self._better(current - self.min_delta, self.best_score):
            self.best_score = current
            self.wait_count = 0
            return False, None
        self.wait_count += 1
        if self.wait_count >= self.patience:
            return True, (
                f"{self.monitor} did not improve in the last {self.wait_count} checks; best {self.best_score:.6g}"
            )
        return False, None
