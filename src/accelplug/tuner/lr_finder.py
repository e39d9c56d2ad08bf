"""The learning-rate range test: its schedules, the loss it records, and the result object ``lr_find`` returns.

The test trains for ``num_training`` steps while the learning rate grows from ``min_lr`` to ``max_lr``
(exponentially or linearly), records each step's rate and an exponentially smoothed loss (``beta=0.98``,
bias-corrected), and stops early once the smoothed loss exceeds ``early_stop_threshold`` times the best seen.
:meth:`_LRFinder.suggestion` then picks the rate where the loss falls fastest. The numbers are Lightning
2.6's: the same schedule formulas (the first step at ``min_lr``, the next at step 2 of ``num_training``),
the same smoothing and the same choice, so a suggestion matches Lightning's for the same losses.

Everything here is pure: running the steps inside a fit, and putting the model back afterwards, is the
Trainer's (:mod:`accelplug.trainer._tuning`), which hands this module the scheduler's optimizer.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import torch
from torch.optim.lr_scheduler import LRScheduler

from ..callbacks.base import Callback
from ..callbacks.lr_finder import LR_MODES
from ..errors import MisconfigurationException
from .attributes import AttributeNotFound, lightning_hasattr

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure, SubFigure

__all__ = ["LR_MODES", "_ExponentialLR", "_LRCallback", "_LRFinder", "_LinearLR"]

log = logging.getLogger(__name__)


def _determine_lr_attr_name(model: Any, attr_name: str = "") -> str:
    """Where the module keeps its learning rate: ``attr_name`` if given, else ``lr`` or ``learning_rate``."""
    if attr_name:
        if not lightning_hasattr(model, attr_name):
            raise AttributeNotFound(
                f"The attribute name for the learning rate was set to {attr_name}, but could not find this as a "
                "field in `model` or `model.hparams`."
            )
        return attr_name
    candidates = ("lr", "learning_rate")
    for name in candidates:
        if lightning_hasattr(model, name):
            return name
    raise AttributeNotFound(
        f"When using the learning rate finder, either `model` or `model.hparams` should have one of these fields: "
        f"{candidates}. If your model has a different name for the learning rate, set it with "
        "`.lr_find(attr_name=...)`."
    )


class _LRFinder:
    """What a range test found: ``results["lr"]`` and ``results["loss"]`` (one entry per step), a suggestion, a plot."""

    def __init__(self, mode: str, lr_min: float, lr_max: float, num_training: int) -> None:
        if mode not in LR_MODES:
            raise MisconfigurationException(f"mode should be either `linear` or `exponential`; got {mode!r}.")
        self.mode = mode
        self.lr_min = lr_min
        self.lr_max = lr_max
        self.num_training = num_training
        self.results: dict[str, Any] = {}
        self._total_batch_idx = 0
        self._optimal_idx: int | None = None

    def plot(self, suggest: bool = False, show: bool = False, ax: Axes | None = None) -> Figure | SubFigure | None:
        """Loss against learning rate (a log axis for the exponential schedule); ``suggest`` marks the suggestion."""
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise MisconfigurationException(
                "To use the `plot` method, you must have Matplotlib installed. Install it by running "
                "`pip install -U matplotlib`."
            ) from None
        lrs, losses = self.results["lr"], self.results["loss"]
        figure: Figure | SubFigure | None
        if ax is None:
            figure, ax = plt.subplots()
        else:
            figure = ax.figure
        ax.plot(lrs, losses)
        if self.mode == "exponential":
            ax.set_xscale("log")
        ax.set_xlabel("Learning rate")
        ax.set_ylabel("Loss")
        if suggest:
            self.suggestion()
            if self._optimal_idx:  # as in Lightning, the first point is never marked
                ax.plot(lrs[self._optimal_idx], losses[self._optimal_idx], markersize=10, marker="o", color="red")
        if show:
            plt.show()
        return figure

    def suggestion(self, skip_begin: int = 10, skip_end: int = 1) -> float | None:
        """The rate at the steepest fall of the loss, leaving out ``skip_begin`` first and ``skip_end`` last points
        (too early to mean much, and where the loss may already diverge); None with fewer than two points left."""
        for name, value in (("skip_begin", skip_begin), ("skip_end", skip_end)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise MisconfigurationException(f"suggestion({name}={value!r}): expected an int >= 0.")
        losses = torch.tensor(self.results["loss"][skip_begin:-skip_end])
        lrs = torch.tensor(self.results["lr"][skip_begin:-skip_end])
        finite = torch.isfinite(losses)
        losses, lrs = losses[finite], lrs[finite]
        if len(losses) < 2:  # a gradient needs two points
            log.error(
                "Failed to compute suggestion for learning rate because there are not enough points. Increase the "
                "loop iteration limits or the size of your dataset/dataloader."
            )
            self._optimal_idx = None
            return None
        gradients = torch.gradient(losses, spacing=[lrs])[0]
        steepest = int(torch.argmin(gradients).item())
        kept = torch.arange(len(self.results["loss"]))[skip_begin:-skip_end][finite]
        self._optimal_idx = int(kept[steepest].item())
        lr: float = self.results["lr"][self._optimal_idx]
        return lr


class _LRCallback(Callback):
    """Records the rate before each optimizer step and the smoothed loss after it; asks the fit to stop on divergence.

    It is the only callback of the range test's fit (the Trainer's own are set aside meanwhile), as in Lightning.
    """

    def __init__(
        self,
        num_training: int,
        early_stop_threshold: float | None = 4.0,
        progress_bar_refresh_rate: int = 0,
        beta: float = 0.98,
        scheduler: Any = None,
    ) -> None:
        self.num_training = num_training
        self.early_stop_threshold = early_stop_threshold
        self.beta = beta
        self.losses: list[float] = []
        self.lrs: list[float] = []
        self.avg_loss = 0.0
        self.best_loss = 0.0
        self.progress_bar_refresh_rate = progress_bar_refresh_rate
        self.scheduler = scheduler

    def _at_step(self, trainer: Any, batch_idx: int) -> bool:
        """Only the batches that end an accumulation window step the optimizer, so only they are recorded."""
        every: int = trainer.accumulate_grad_batches
        return (batch_idx + 1) % every == 0

    def on_train_batch_start(self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int) -> None:
        if self._at_step(trainer, batch_idx):
            self.lrs.append(self.scheduler.lr[0])

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
        if not self._at_step(trainer, batch_idx):
            return
        if not outputs:  # a skipped step (training_step returned None): NaN keeps lrs and losses aligned
            self.losses.append(float("nan"))
            return
        loss = outputs if isinstance(outputs, torch.Tensor) else outputs["loss"]
        current_loss = float(loss.item())
        step = trainer.global_step
        self.avg_loss = self.beta * self.avg_loss + (1 - self.beta) * current_loss
        smoothed = self.avg_loss / (1 - self.beta ** (step + 1))
        threshold = self.early_stop_threshold
        if threshold is not None and step > 1 and smoothed > threshold * self.best_loss:
            trainer.should_stop = True
        trainer.should_stop = trainer.strategy.broadcast_object(trainer.should_stop)
        if smoothed < self.best_loss or step == 1:
            self.best_loss = smoothed
        self.losses.append(smoothed)


class _RangeLR(LRScheduler):
    """A schedule from the optimizer's rate to ``end_lr`` over ``num_iter`` steps; ``lr`` is the latest rate."""

    def __init__(self, optimizer: torch.optim.Optimizer, end_lr: float, num_iter: int, last_epoch: int = -1) -> None:
        self.end_lr = end_lr
        self.num_iter = num_iter
        self._lr: list[float] = []
        super().__init__(optimizer, last_epoch)

    def _at(self, base_lr: float, fraction: float) -> float:
        raise NotImplementedError

    def get_lr(self) -> list[float]:  # type: ignore[override]
        fraction = (self.last_epoch + 1) / self.num_iter
        bases = [float(base_lr) for base_lr in self.base_lrs]
        rates = [self._at(base_lr, fraction) for base_lr in bases] if self.last_epoch > 0 else bases
        self._lr = rates
        return rates

    @property
    def lr(self) -> list[float]:
        return self._lr


class _LinearLR(_RangeLR):
    def _at(self, base_lr: float, fraction: float) -> float:
        return base_lr + fraction * (self.end_lr - base_lr)


class _ExponentialLR(_RangeLR):
    def _at(self, base_lr: float, fraction: float) -> float:
        return float(base_lr * (self.end_lr / base_lr) ** fraction)
