"""``LearningRateFinder``: the learning-rate range test run when a fit starts (or at any training hook you choose).

The test itself (the growing schedule, the smoothed loss, the suggestion) is :mod:`accelplug.tuner.lr_finder`'s
and the trial fit the Trainer's; this callback sits below the Trainer, so it reaches both through its
``trainer`` argument (``trainer._tuning()``). To run it at other epochs, override ``on_fit_start`` to do
nothing and call :meth:`LearningRateFinder.lr_find` from ``on_train_epoch_start`` (Lightning's documented
fine-tuning pattern); the fit goes on from the state it had, with the suggested rate.
"""

from __future__ import annotations

from typing import Any

import torch

from ..errors import MisconfigurationException, TunerExit, did_you_mean
from .base import Callback

__all__ = ["LR_MODES", "LearningRateFinder", "check_lr_finder_arguments"]

#: The schedules the range test can follow, Lightning's words.
LR_MODES = ("linear", "exponential")


def check_lr_finder_arguments(
    min_lr: object, max_lr: object, num_training: object, mode: object, early_stop_threshold: object
) -> str:
    """The mode, lower-cased, when every argument is usable; otherwise the error names the first bad one."""
    if not isinstance(mode, str) or mode.lower() not in LR_MODES:
        raise MisconfigurationException(
            f"`mode` should be either of {LR_MODES}; got mode={mode!r}.{did_you_mean(mode, LR_MODES)}"
        )
    for name, value in (("min_lr", min_lr), ("max_lr", max_lr)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
            raise MisconfigurationException(f"{name}={value!r}: expected a finite learning rate > 0.")
    if isinstance(num_training, bool) or not isinstance(num_training, int) or num_training < 1:
        raise MisconfigurationException(f"num_training={num_training!r}: expected an int >= 1 (steps to test).")
    threshold = early_stop_threshold
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))):
        raise MisconfigurationException(
            f"early_stop_threshold={threshold!r}: expected a number (a multiple of the best loss) or None (no stop)."
        )
    return mode.lower()


class LearningRateFinder(Callback):
    """Runs the learning-rate range test at ``on_fit_start`` and (``update_attr``) sets the suggested rate.

    ``optimal_lr`` holds the result object (``results``, ``suggestion()``, ``plot()``) afterwards.
    """

    SUPPORTED_MODES = LR_MODES

    def __init__(
        self,
        min_lr: float = 1e-8,
        max_lr: float = 1,
        num_training_steps: int = 100,
        mode: str = "exponential",
        early_stop_threshold: float | None = 4.0,
        update_attr: bool = True,
        attr_name: str = "",
    ) -> None:
        mode = check_lr_finder_arguments(min_lr, max_lr, num_training_steps, mode, early_stop_threshold)
        if not isinstance(attr_name, str):
            raise MisconfigurationException(f"attr_name={attr_name!r}: expected the attribute's name (a str).")
        self._min_lr = min_lr
        self._max_lr = max_lr
        self._num_training_steps = num_training_steps
        self._mode = mode
        self._early_stop_threshold = early_stop_threshold
        self._update_attr = bool(update_attr)
        self._attr_name = attr_name
        #: Set by ``Tuner.lr_find``: the call ends once the test is done.
        self._early_exit = False
        self.optimal_lr: Any = None

    def lr_find(self, trainer: Any, pl_module: torch.nn.Module) -> None:
        """Run the test now, from the fit's current state (the random generators are left as they were)."""
        self.optimal_lr = trainer._tuning().lr_find(
            trainer,
            pl_module,
            min_lr=self._min_lr,
            max_lr=self._max_lr,
            num_training=self._num_training_steps,
            mode=self._mode,
            early_stop_threshold=self._early_stop_threshold,
            update_attr=self._update_attr,
            attr_name=self._attr_name,
        )
        if self._early_exit:
            raise TunerExit()

    def on_fit_start(self, trainer: Any, pl_module: torch.nn.Module) -> None:
        self.lr_find(trainer, pl_module)
