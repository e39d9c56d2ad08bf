"""More of Lightning's Trainer names: its options as attributes, the loaders and batch counts of the calls, and
the small tools (``print``, ``init_module``) Lightning scripts reach for.

Kept apart from :mod:`.properties` (what the selection decided, where the run stands) so neither grows long.
The loaders and counts are what the loops recorded in :attr:`LoopState.data
<accelplug.trainer.state.LoopState.data>`: the loaders as this process iterates them (sharded under DDP), the
counts after the ``limit_*_batches`` options, ``inf`` where a loader has no length (Lightning's values).
"""

from __future__ import annotations

import math
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..errors import MisconfigurationException

if TYPE_CHECKING:
    from ..precision.base import Precision
    from ..selection import Selection
    from ..strategies.base import Strategy
    from .options.entries import TrainerOptions
    from .process.interrupts import SignalGuard
    from .state import LoopState

__all__ = ["TrainerViews"]


def _one_or_all(loaders: list[Any] | None) -> Any:
    if loaders is None:
        return None
    return loaders[0] if len(loaders) == 1 else list(loaders)


class TrainerViews:
    options: TrainerOptions
    selection: Selection
    state: LoopState
    callbacks: list[Any]
    _strategy: Strategy
    _precision: Precision
    _given: dict[str, Any]
    _signals: SignalGuard | None

    # ---- the options, as Lightning's Trainer attributes --------------------------------------------------
    @property
    def min_epochs(self) -> int | None:
        return self.options.min_epochs

    @property
    def min_steps(self) -> int | None:
        return self.options.min_steps

    @property
    def accumulate_grad_batches(self) -> int:
        return self.state.accumulate_grad_batches or self.options.accumulate_grad_batches

    @accumulate_grad_batches.setter
    def accumulate_grad_batches(self, value: int) -> None:
        """Settable as in Lightning (GradientAccumulationScheduler); a fit takes it at the next epoch's start."""
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise MisconfigurationException(f"accumulate_grad_batches={value!r} is not accepted: an int >= 1.")
        self.state.accumulate_grad_batches = value

    @property
    def gradient_clip_val(self) -> float | None:
        return self.options.gradient_clip_val

    @property
    def gradient_clip_algorithm(self) -> str | None:
        """As given (None when not given, as in Lightning; clipping then uses ``"norm"``)."""
        given = self._given.get("gradient_clip_algorithm")
        return given.lower() if isinstance(given, str) else None

    @property
    def limit_train_batches(self) -> float | int:
        return self.options.limit_train_batches

    @property
    def limit_val_batches(self) -> float | int:
        return self.options.limit_val_batches

    @property
    def limit_test_batches(self) -> float | int:
        return self.options.limit_test_batches

    @property
    def limit_predict_batches(self) -> float | int:
        return self.options.limit_predict_batches

    @property
    def overfit_batches(self) -> float | int:
        return self.options.overfit_batches

    @property
    def fast_dev_run(self) -> bool | int:
        """As given: ``True`` stays ``True`` (one batch), an int is the number of batches."""
        given = self._given.get("fast_dev_run", False)
        return given if isinstance(given, (bool, int)) else bool(self.options.fast_dev_run)

    @property
    def log_every_n_steps(self) -> int:
        return self.options.log_every_n_steps

    @property
    def num_sanity_val_steps(self) -> float | int:
        steps = self.options.num_sanity_val_steps
        return math.inf if steps == -1 else steps

    @property
    def val_check_interval(self) -> float | int:
        interval = self.options.val_check_interval
        return 1.0 if interval is None else interval

    @property
    def check_val_every_n_epoch(self) -> int | None:
        return self.options.check_val_every_n_epoch

    @property
    def reload_dataloaders_every_n_epochs(self) -> int:
        return self.options.reload_dataloaders_every_n_epochs

    @property
    def barebones(self) -> bool:
        return self.options.barebones

    @property
    def enable_autolog_hparams(self) -> bool:
        return self.options.enable_autolog_hparams

    # ---- the loaders and their batch counts -----------------------------------------------------------
    def _loaders(self, key: str) -> list[Any] | None:
        found = self.state.data.get(key)
        return None if found is None else list(found[0] if isinstance(found[0], list) else [found[0]])

    def _counts(self, key: str) -> list[float]:
        found = self.state.data.get(key)
        return [] if found is None else list(found[1] if isinstance(found[1], list) else [found[1]])

    @property
    def train_dataloader(self) -> Any:
        """The loader the last ``fit`` trained on (None before one)."""
        return _one_or_all(self._loaders("train"))

    @property
    def val_dataloaders(self) -> Any:
        """The validation loader(s) of the last ``fit`` or ``validate``."""
        return _one_or_all(self._loaders("val"))

    @property
    def test_dataloaders(self) -> Any:
        return _one_or_all(self._loaders("test"))

    @property
    def predict_dataloaders(self) -> Any:
        return _one_or_all(self._loaders("predict"))

    @property
    def num_training_batches(self) -> float:
        """Training batches per epoch (``inf`` before a fit set up its loader, or for a loader with no length)."""
        counts = self._counts("train")
        return counts[0] if counts else math.inf

    @property
    def num_val_batches(self) -> list[float]:
        return self._counts("val")

    @property
    def num_sanity_val_batches(self) -> list[float]:
        return [min(self.num_sanity_val_steps, count) for count in self._counts("val")]

    @property
    def num_test_batches(self) -> list[float]:
        return self._counts("test")

    @property
    def num_predict_batches(self) -> list[float]:
        return self._counts("predict")

    @property
    def estimated_stepping_batches(self) -> float:
        """Optimizer steps the fit will take (Lightning's estimate: accumulation and limits included).

        Read in ``configure_optimizers`` (for OneCycleLR's ``total_steps``), it makes the training loader
        first, as Lightning does.
        """
        options = self.options
        max_steps = options.max_steps if options.max_steps is not None else -1
        max_epochs = options.max_epochs
        if max_epochs is None:  # Lightning's reading: 1000 epochs, unless another limit was given
            max_epochs = 1000 if max_steps == -1 and options.max_time is None else -1
        if max_epochs == -1:
            return math.inf if max_steps == -1 else max_steps
        if "train" not in self.state.data and self.state.train_source is not None:
            self.state.train_source()
        batches = self.num_training_batches
        if batches == math.inf:
            return max_steps
        estimate = math.ceil(batches / self.accumulate_grad_batches) * max(max_epochs, 1)
        return min(estimate, max_steps) if max_steps != -1 else estimate

    @property
    def is_last_batch(self) -> bool:
        """Whether the training batch being processed is its epoch's last."""
        return self.state.is_last_batch

    # ---- the rest ---------------------------------------------------------------------------------------
    @property
    def ckpt_path(self) -> str | None:
        """The checkpoint the last call restored (set it to have the next call restore that one)."""
        return self.state.ckpt_path

    @ckpt_path.setter
    def ckpt_path(self, path: Any) -> None:
        self.state.ckpt_path = None if path is None else str(path)
        self.state.ckpt_path_set = path is not None

    @property
    def received_sigterm(self) -> bool:
        """Whether SIGTERM arrived during a fit (the fit then stops with a checkpoint; see ``process.interrupts``)."""
        return self._signals is not None and self._signals.received == signal.SIGTERM

    @property
    def scaler(self) -> Any:
        """The gradient scaler of the precision (``16-mixed`` on CUDA), else None."""
        return getattr(self._precision, "scaler", None)

    @property
    def evaluating(self) -> bool:
        from .state import Stage

        return self.state.stage in (Stage.VALIDATING, Stage.TESTING, Stage.SANITY_CHECKING)

    @property
    def early_stopping_callbacks(self) -> list[Any]:
        from ..callbacks import EarlyStopping

        return [c for c in self.callbacks if isinstance(c, EarlyStopping)]

    def print(self, *args: Any, **kwargs: Any) -> None:
        """``print`` on each machine's first process only."""
        if self._strategy.local_rank == 0:
            print(*args, **kwargs)

    @contextmanager
    def init_module(self, empty_init: bool | None = None) -> Iterator[None]:
        """Build a model inside: its tensors are made on the Trainer's device in the precision's dtype at once."""
        from ..fabric.init import module_init_context
        from ..strategies.fsdp import FSDPStrategy

        sharded = isinstance(self._strategy, FSDPStrategy)
        device = self.selection.root_device
        with module_init_context(device, self._precision, sharded=sharded, empty_init=empty_init):
            yield

    def _tuning(self) -> Any:
        """The tuner's trial fits, for ``LearningRateFinder``/``BatchSizeFinder``: they sit below the Trainer, so
        they reach it through their ``trainer`` argument rather than an import."""
        from . import tuning

        return tuning
