"""``BatchSizeFinder``: the largest batch size that fits in memory, found when a fit starts.

The search (doubling, bisecting, the out-of-memory test) is :mod:`accelplug.tuner.batch_size_scaling`'s and the
trial fits the Trainer's; this callback sits below the Trainer, so it reaches both through its ``trainer``
argument (``trainer._tuning()``). The size lives where the project keeps it (``batch_arg_name`` on the module,
its ``hparams``, or the datamodule), and the loaders are made again by calling ``*_dataloader()``, so the
module or datamodule must make them (loaders passed straight to ``fit`` cannot change size).
"""

from __future__ import annotations

from typing import Any

import torch

from ..errors import MisconfigurationException, TunerExit, did_you_mean
from .base import Callback

__all__ = ["BATCH_SIZE_MODES", "BatchSizeFinder", "check_batch_size_arguments"]

#: The search modes, Lightning's words.
BATCH_SIZE_MODES = ("power", "binsearch")


def check_batch_size_arguments(
    mode: object, steps_per_trial: object, init_val: object, max_trials: object, margin: object, max_val: object
) -> str:
    """The mode, lower-cased, when every argument is usable; otherwise the error names the first bad one."""
    if not isinstance(mode, str) or mode.lower() not in BATCH_SIZE_MODES:
        raise MisconfigurationException(
            f"`mode` should be either of {BATCH_SIZE_MODES}; got mode={mode!r}.{did_you_mean(mode, BATCH_SIZE_MODES)}"
        )
    for name, value, least in (
        ("steps_per_trial", steps_per_trial, 1),
        ("init_val", init_val, 1),
        ("max_trials", max_trials, 0),  # 0: no trial, the initial size is the answer (Lightning's)
        ("max_val", max_val, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise MisconfigurationException(f"{name}={value!r}: expected an int >= {least}.")
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0.0 <= margin < 1.0:
        raise MisconfigurationException(f"`margin` should be between 0 and 1. Found margin={margin!r}.")
    return mode.lower()


class BatchSizeFinder(Callback):
    """Scales the batch size at ``on_fit_start``; ``optimal_batch_size`` holds the size found afterwards."""

    SUPPORTED_MODES = BATCH_SIZE_MODES

    def __init__(
        self,
        mode: str = "power",
        steps_per_trial: int = 3,
        init_val: int = 2,
        max_trials: int = 25,
        batch_arg_name: str = "batch_size",
        margin: float = 0.05,
        max_val: int = 8192,
    ) -> None:
        mode = check_batch_size_arguments(mode, steps_per_trial, init_val, max_trials, margin, max_val)
        if not isinstance(batch_arg_name, str) or not batch_arg_name:
            raise MisconfigurationException(f"batch_arg_name={batch_arg_name!r}: expected the attribute's name.")
        self.optimal_batch_size: int | None = init_val
        self._mode = mode
        self._steps_per_trial = steps_per_trial
        self._init_val = init_val
        self._max_trials = max_trials
        self._batch_arg_name = batch_arg_name
        self._margin = margin
        self._max_val = max_val
        #: Set by ``Tuner.scale_batch_size``: the call ends once the search is done.
        self._early_exit = False

    def setup(self, trainer: Any, pl_module: torch.nn.Module, stage: str | None = None) -> None:
        trainer._tuning().check_batch_size_setup(trainer, pl_module, stage, self._batch_arg_name)

    def scale_batch_size(self, trainer: Any, pl_module: torch.nn.Module) -> None:
        """Search now, from the fit's current state; the fit goes on with the size found."""
        self.optimal_batch_size = trainer._tuning().scale_batch_size(
            trainer,
            pl_module,
            mode=self._mode,
            steps_per_trial=self._steps_per_trial,
            init_val=self._init_val,
            max_trials=self._max_trials,
            batch_arg_name=self._batch_arg_name,
            margin=self._margin,
            max_val=self._max_val,
        )
        if self._early_exit:
            raise TunerExit()

    def on_fit_start(self, trainer: Any, pl_module: torch.nn.Module) -> None:
        self.scale_batch_size(trainer, pl_module)

    def on_validation_start(self, trainer: Any, pl_module: torch.nn.Module) -> None:
        """``trainer.validate()``: search before its first batch (not at a fit's validations)."""
        if trainer.sanity_checking or trainer.state.fn != "validate":
            return
        self.scale_batch_size(trainer, pl_module)

    def on_test_start(self, trainer: Any, pl_module: torch.nn.Module) -> None:
        self.scale_batch_size(trainer, pl_module)

    def on_predict_start(self, trainer: Any, pl_module: torch.nn.Module) -> None:
        self.scale_batch_size(trainer, pl_module)
