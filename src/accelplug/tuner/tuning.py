"""``Tuner(trainer)``: the learning-rate range test and the batch-size search, each run as one call of the Trainer.

As in Lightning, each method puts its callback first among the Trainer's callbacks, runs ``trainer.fit``
(the callback does its work at ``on_fit_start`` and then ends the call), and takes the callback out again;
the model and optimizer come back as they were, with the suggestion applied when asked. The arguments
are checked before anything runs, so a typo costs no setup.
"""

from __future__ import annotations

from typing import Any, Literal

import torch

from ..callbacks.batch_size_finder import BatchSizeFinder, check_batch_size_arguments
from ..callbacks.lr_finder import LearningRateFinder, check_lr_finder_arguments
from ..errors import MisconfigurationException, did_you_mean
from .lr_finder import _LRFinder

__all__ = ["Tuner"]

_METHODS = ("fit", "validate", "test", "predict")


class Tuner:
    """Tunes a model's learning rate or batch size with ``trainer``'s settings."""

    def __init__(self, trainer: Any) -> None:
        if not all(hasattr(trainer, name) for name in ("fit", "callbacks", "state")):
            raise MisconfigurationException(
                f"Tuner(trainer) needs an accelplug Trainer; got {type(trainer).__name__}: {trainer!r}."
            )
        self._trainer = trainer

    def scale_batch_size(
        self,
        model: torch.nn.Module,
        train_dataloaders: Any = None,
        val_dataloaders: Any = None,
        dataloaders: Any = None,
        datamodule: Any = None,
        method: Literal["fit", "validate", "test", "predict"] = "fit",
        mode: str = "power",
        steps_per_trial: int = 3,
        init_val: int = 2,
        max_trials: int = 25,
        batch_arg_name: str = "batch_size",
        margin: float = 0.05,
        max_val: int = 8192,
    ) -> int | None:
        """The largest batch size (``power``: doubling; ``binsearch``: then bisecting, less ``margin``) whose
        ``steps_per_trial`` steps run without running out of memory; ``batch_arg_name`` is left at it."""
        _check_tuner_configuration(train_dataloaders, val_dataloaders, dataloaders, method)
        check_batch_size_arguments(mode, steps_per_trial, init_val, max_trials, margin, max_val)
        trainer = self._trainer
        if trainer.strategy.is_distributed:  # as configured (Lightning's rule): before any process is started
            raise MisconfigurationException(
                f"Tuning the batch size is currently not supported with distributed strategies "
                f"(strategy={trainer.strategy.name!r}); tune on one device, then pass the size to the distributed run."
            )
        if any(isinstance(c, BatchSizeFinder) for c in trainer.callbacks):
            raise MisconfigurationException(
                "Trainer is already configured with a `BatchSizeFinder` callback. Please remove it if you want to use "
                "the Tuner."
            )
        finder = BatchSizeFinder(mode, steps_per_trial, init_val, max_trials, batch_arg_name, margin, max_val)
        finder._early_exit = True
        if method == "fit":
            call = lambda: trainer.fit(model, train_dataloaders, val_dataloaders, datamodule)  # noqa: E731
        else:
            call = lambda: getattr(trainer, method)(model, dataloaders, datamodule=datamodule)  # noqa: E731
        self._run_with(finder, call)
        return finder.optimal_batch_size

    def lr_find(
        self,
        model: torch.nn.Module,
        train_dataloaders: Any = None,
        val_dataloaders: Any = None,
        dataloaders: Any = None,
        datamodule: Any = None,
        method: Literal["fit", "validate", "test", "predict"] = "fit",
        min_lr: float = 1e-8,
        max_lr: float = 1,
        num_training: int = 100,
        mode: str = "exponential",
        early_stop_threshold: float | None = 4.0,
        update_attr: bool = True,
        attr_name: str = "",
    ) -> _LRFinder | None:
        """The range test over ``num_training`` steps from ``min_lr`` to ``max_lr``; with ``update_attr``, the
        suggested rate is set on ``lr``/``learning_rate`` (or ``attr_name``) of the model or its hparams."""
        if method != "fit":
            raise MisconfigurationException(
                f"method='fit' is the only valid configuration to run lr finder; got method={method!r}."
            )
        _check_tuner_configuration(train_dataloaders, val_dataloaders, dataloaders, method)
        check_lr_finder_arguments(min_lr, max_lr, num_training, mode, early_stop_threshold)
        trainer = self._trainer
        if any(isinstance(c, LearningRateFinder) for c in trainer.callbacks):
            raise MisconfigurationException(
                "Trainer is already configured with a `LearningRateFinder` callback. Please remove it if you want to "
                "use the Tuner."
            )
        finder = LearningRateFinder(min_lr, max_lr, num_training, mode, early_stop_threshold, update_attr, attr_name)
        finder._early_exit = True
        self._run_with(finder, lambda: trainer.fit(model, train_dataloaders, val_dataloaders, datamodule))
        result: _LRFinder | None = finder.optimal_lr
        return result

    def _run_with(self, callback: Any, call: Any) -> None:
        """``call()`` with ``callback`` first among the Trainer's callbacks, and without it afterwards."""
        trainer = self._trainer
        trainer.callbacks = [callback, *trainer.callbacks]
        try:
            call()
        finally:
            trainer.callbacks = [c for c in trainer.callbacks if c is not callback]


def _check_tuner_configuration(train_dataloaders: Any, val_dataloaders: Any, dataloaders: Any, method: object) -> None:
    if method not in _METHODS:
        raise MisconfigurationException(
            f"method {method!r} is invalid. Should be one of {_METHODS}.{did_you_mean(method, _METHODS)}"
        )
    if method == "fit":
        if dataloaders is not None:
            raise MisconfigurationException(
                "In tuner with method='fit', `dataloaders` argument should be None, please consider setting "
                "`train_dataloaders` and `val_dataloaders` instead."
            )
    elif train_dataloaders is not None or val_dataloaders is not None:
        raise MisconfigurationException(
            f"In tuner with `method`={method!r}, `train_dataloaders` and `val_dataloaders` arguments should be None, "
            "please consider setting `dataloaders` instead."
        )
