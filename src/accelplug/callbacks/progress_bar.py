"""``ProgressBar``, the base of the progress-bar callbacks, and what every bar shows (``get_standard_metrics``).

Apart from the bars themselves (:mod:`accelplug.callbacks.progress`: ``TQDMProgressBar``, ``RichProgressBar``)
because every ``Trainer()`` checks its callbacks against this base, and a Trainer that draws with its own
display needs neither bar's code (issue 28's start-up). Lightning's ``progress_bar`` module holds the same.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import MisconfigurationException
from .base import Callback

__all__ = ["ProgressBar", "get_standard_metrics"]


def _total(value: Any) -> int | None:
    """A batch count for a bar; None when unknown or infinite (an iterable dataset)."""
    if value is None or (isinstance(value, float) and (math.isinf(value) or math.isnan(value))):
        return None
    return int(value)


def _nth(values: Any, index: int) -> Any:
    if isinstance(values, (list, tuple)):
        return values[index] if index < len(values) else None
    return values


class ProgressBar(Callback):
    """What every progress bar shares: the trainer it draws for, the batch totals, the metrics shown."""

    def __init__(self) -> None:
        self._trainer: Any = None
        self._current_eval_dataloader_idx: int | None = None

    @property
    def trainer(self) -> Any:
        if self._trainer is None:
            raise MisconfigurationException(
                f"{type(self).__name__} is not attached to a Trainer yet: pass it in Trainer(callbacks=[...])."
            )
        return self._trainer

    @property
    def pl_module(self) -> Any:
        return self.trainer.lightning_module

    sanity_check_description = "Sanity Checking"
    train_description = "Training"
    validation_description = "Validation"
    test_description = "Testing"
    predict_description = "Predicting"

    @property
    def total_train_batches(self) -> int | float:
        """Batches in one training epoch (``inf`` when the loader has no length); in a run bounded by steps alone
        (``max_epochs=-1``, ``max_steps``), no more than the steps left, as Lightning counts them."""
        trainer = self.trainer
        value = getattr(trainer, "num_training_batches", None)
        total = float("inf") if value is None else value
        max_steps = getattr(trainer, "max_steps", None)
        if getattr(trainer, "max_epochs", None) == -1 and isinstance(max_steps, int) and max_steps > 0:
            steps_left: int = max_steps - trainer.global_step
            return min(total, steps_left)
        return total

    def _eval_total(self, name: str) -> int | float:
        index = self._current_eval_dataloader_idx or 0
        value = _nth(getattr(self.trainer, name, None), index)
        return float("inf") if value is None else value

    @property
    def total_val_batches_current_dataloader(self) -> int | float:
        name = "num_sanity_val_batches" if self.trainer.sanity_checking else "num_val_batches"
        return self._eval_total(name)

    @property
    def total_test_batches_current_dataloader(self) -> int | float:
        return self._eval_total("num_test_batches")

    @property
    def total_predict_batches_current_dataloader(self) -> int | float:
        return self._eval_total("num_predict_batches")

    @property
    def total_val_batches(self) -> int | float:
        """All validation loaders' batches, 0 in an epoch that does not validate (as Lightning counts them)."""
        trainer = self.trainer
        every = getattr(trainer, "check_val_every_n_epoch", None)
        if not getattr(trainer, "enable_validation", True) or (every and (trainer.current_epoch + 1) % every):
            return 0
        values = getattr(trainer, "num_val_batches", None)
        if values is None:
            return float("inf")
        return sum(values) if isinstance(values, (list, tuple)) else values

    def has_dataloader_changed(self, dataloader_idx: int) -> bool:
        old, self._current_eval_dataloader_idx = self._current_eval_dataloader_idx, dataloader_idx
        return old != dataloader_idx

    def reset_dataloader_idx_tracker(self) -> None:
        self._current_eval_dataloader_idx = None

    @property
    def is_enabled(self) -> bool:
        """Whether the bar draws (and ``LightningModule.print`` goes through :meth:`print`)."""
        return True

    @property
    def is_disabled(self) -> bool:
        return not self.is_enabled

    def disable(self) -> None:
        """Stop drawing (the Trainer calls it on processes other than global zero)."""
        raise NotImplementedError

    def enable(self) -> None:
        raise NotImplementedError

    def print(self, *args: Any, **kwargs: Any) -> None:
        """Print without breaking the bars."""
        print(*args, **kwargs)

    def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
        self._trainer = trainer
        if not trainer.is_global_zero:
            self.disable()

    def get_metrics(self, trainer: Any, pl_module: Any) -> dict[str, int | str | float | dict[str, float]]:
        """What the bar shows: :func:`get_standard_metrics` (``v_num``) and the prog_bar metrics."""
        shown: dict[str, Any] = dict(get_standard_metrics(trainer))
        for name, value in trainer.progress_bar_metrics.items():
            shown[name] = float(value) if not isinstance(value, (int, str)) else value
        return shown


def get_standard_metrics(trainer: Any) -> dict[str, int | str]:
    """What every bar shows besides the logged values: ``v_num``, the loggers' version (the last 4 characters of a
    text one; several loggers' distinct versions joined by ``_``), when there is one."""
    loggers = list(trainer.loggers)
    if not loggers:
        return {}
    if len(loggers) == 1:
        version = loggers[0].version
    else:
        version = "_".join(dict.fromkeys(str(logger.version) for logger in loggers))
    if version in ("", None):
        return {}
    return {"v_num": version[-4:] if isinstance(version, str) else version}


class _SwitchedBar(ProgressBar):
    """A bar that draws while enabled and its ``refresh_rate`` is above 0: what Lightning's TQDM and rich bars share
    (the Trainer's ``disable()`` on processes other than global zero, ``refresh_rate=0`` to turn a bar off)."""

    _refresh_rate: int
    _enabled: bool = True

    @property
    def refresh_rate(self) -> int:
        return self._refresh_rate

    @property
    def is_enabled(self) -> bool:
        return self._enabled and self.refresh_rate > 0

    def disable(self) -> None:
        self._enabled = False

    def enable(self) -> None:
        self._enabled = True
