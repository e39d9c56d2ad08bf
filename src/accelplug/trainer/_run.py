"""The record of one fit/validate/test/predict call: what was set up, handed to the loops instead of the Trainer.

:mod:`._setup` builds it in Lightning's order and tears it down; the loops read it and never touch the
Trainer's private state. It is kept on the Trainer afterwards, so ``save_checkpoint`` works after ``fit``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from ..data.loaders import prepare_loader, warn_shuffled_evaluation
from ..data.workers import warn_spawned_workers
from .dispatch.hooks import HookDispatcher
from .logging.self_log import LogRouter
from .state import LoopState, Stage

if TYPE_CHECKING:
    from ..precision.base import NumericPrecision
    from ..strategies.base import Strategy
    from ..strategies.optimizers import OptimizerSetup
    from ..strategies.prepared import PreparedModule
    from .options.entries import TrainerOptions

__all__ = ["Run"]


@dataclass
class Run:
    """What one call set up; kept on the Trainer afterwards so ``save_checkpoint`` works after ``fit``."""

    trainer: Any
    module: torch.nn.Module
    stage: Stage
    strategy: Strategy
    precision: NumericPrecision
    device: torch.device
    state: LoopState
    options: TrainerOptions
    hooks: HookDispatcher
    router: LogRouter
    prepared: PreparedModule
    transfer: Callable[[Any], Any]
    #: Whether this process prints progress and notes (global zero, progress bar on).
    chatty: bool = False
    datamodule: Any = None
    loggers: list[Any] = field(default_factory=list)
    csv_path: Path | None = None
    #: Loaders the batch-size finder made at the size it found during an evaluation or prediction call's start
    #: hook; the call's loop takes them once that hook returns.
    tuned_loaders: list[Any] | None = None

    #: Each loop's current batch iterator (``"train"``, ``"val/0"``...), kept from one ``iter()`` to the next as
    #: Lightning's fetcher keeps it: a loader's worker processes then stop when the loop's next epoch starts its
    #: own, or when the call ends (``end_run``), not as soon as an epoch took its last batch.
    iterators: dict[str, Any] = field(default_factory=dict)

    def hold_iterator(self, key: str, iterable: Any) -> Any:
        """A new iterator over ``iterable``, kept under ``key`` in place of the one before (made first, as Lightning
        does: the old workers stop once the new ones started)."""
        iterator = iter(iterable)
        self.iterators[key] = iterator
        return iterator

    @property
    def optim(self) -> OptimizerSetup | None:
        return self.prepared.optim

    def prepare_loader(self, loader: Any, *, train: bool = False, predict: bool = False) -> Any:
        """This process's view of ``loader``, with this run's device, strategy and sampler options."""
        options = self.options
        return prepare_loader(
            loader,
            self.device,
            self.strategy,
            train=train,
            predict=predict,
            distributed_sampler=options.use_distributed_sampler,
            seed=options.seed,
        )

    def prepare_loaders(self, loaders: Sequence[Any], prefix: str) -> list[Any]:
        """An evaluation's or prediction's loaders (``prefix``: ``val``, ``test`` or ``predict``), each prepared,
        with Lightning's advice when one of them shuffles."""
        warn_shuffled_evaluation(loaders, prefix)
        warn_spawned_workers(loaders, f"{prefix}_dataloader")
        return [self.prepare_loader(loader, predict=prefix == "predict") for loader in loaders]

    def flush_loggers(self) -> None:
        """At an epoch's end, ``flush()`` the loggers that have no ``save()`` (those were saved as they logged)."""
        for logger in self.loggers:
            flush = getattr(logger, "flush", None)
            if not callable(getattr(logger, "save", None)) and callable(flush):
                flush()

    def log_metrics(self, metrics: dict[str, float], step: int, epoch: int | None = None) -> None:
        """Each logger's ``log_metrics(metrics=..., step=...)`` then its ``save()``, as Lightning's logger connector
        calls them. ``logged_metrics`` keeps the values as tensors (Lightning's); ``epoch`` (an int) joins the row
        but not ``logged_metrics``, unless the user logged an ``epoch`` of their own, which wins. Where an ``epoch``
        is given (the rows Lightning writes without a step of its own: training steps, epoch ends), a ``step`` the
        user logged is the row's step instead, taken out of the row, and no ``epoch`` is added (Lightning's rule)."""
        self.state.logged_metrics.update({k: torch.tensor(v) for k, v in metrics.items()})
        if epoch is not None and "step" in metrics:
            row = {k: v for k, v in metrics.items() if k != "step"}
            step = int(metrics["step"])
        else:
            row = metrics if epoch is None or "epoch" in metrics else {**metrics, "epoch": int(epoch)}
        for logger in self.loggers:
            logger.log_metrics(metrics=row, step=step)
            save = getattr(logger, "save", None)
            if callable(save):
                save()
