"""The Trainer's read-only views (Lightning's names): what was selected, where the run stands, its outputs.

Kept apart from ``trainer.py`` so the class that does the work stays short. Every counter here is a
view of the :class:`~accelplug.trainer.state.LoopState` the loops update; the few that callbacks may
set (``should_stop``) write through to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from .logging.collector import settle_bar

if TYPE_CHECKING:
    from ..accelerator import Accelerator
    from ..callbacks import ModelCheckpoint
    from ..precision.base import Precision
    from ..selection import Selection
    from ..strategies.base import Strategy
    from .options.entries import TrainerOptions
    from .run import Run
    from .state import LoopState, StopReason

__all__ = ["TrainerProperties"]


class TrainerProperties:
    selection: Selection
    options: TrainerOptions
    state: LoopState
    callbacks: list[Any]
    _strategy: Strategy
    _precision: Precision
    _run: Run | None
    _module: torch.nn.Module | None
    _log_dir: Path | None
    _loggers: list[Any]

    # ---- what the selection decided -----------------------------------------------------------------
    @property
    def accelerator(self) -> Accelerator:
        return self.selection.accelerator

    @property
    def strategy(self) -> Strategy:
        return self._strategy

    @property
    def precision_plugin(self) -> Precision:
        """The precision object (``trainer.precision`` is its name, as in Lightning)."""
        return self._precision

    @property
    def precision(self) -> str:
        """Lightning's name of the precision: a plugin's own ``precision`` attribute when one was passed."""
        named = getattr(self._precision, "precision", None)
        return named if isinstance(named, str) else self.selection.precision

    @property
    def num_devices(self) -> int:
        return self.selection.num_devices

    @property
    def device_ids(self) -> list[int]:
        return list(self.selection.device_ids)

    @property
    def root_device(self) -> torch.device:
        return self.selection.root_device

    @property
    def num_nodes(self) -> int:
        return self.options.num_nodes

    @property
    def world_size(self) -> int:
        return self._strategy.world_size

    @property
    def global_rank(self) -> int:
        return self._strategy.global_rank

    @property
    def local_rank(self) -> int:
        return self._strategy.local_rank

    @property
    def node_rank(self) -> int:
        return self.global_rank // max(1, self.num_devices)

    @property
    def is_global_zero(self) -> bool:
        return self._strategy.is_global_zero

    # ---- where the run stands ------------------------------------------------------------------------
    @property
    def global_step(self) -> int:
        """Optimizer steps taken so far (restored by a resume)."""
        return self.state.global_step

    @global_step.setter
    def global_step(self, value: int) -> None:
        self.state.global_step = value

    @property
    def current_epoch(self) -> int:
        """The epoch being trained (0-based); after its end hooks ran (and after fit), the next one (Lightning's)."""
        return self.state.epoch

    @current_epoch.setter
    def current_epoch(self, value: int) -> None:
        self.state.current_epoch, self.state.epoch_left = value, False

    @property
    def should_stop(self) -> bool:
        """Set it to True (in a callback or the module) to end fit after the current step."""
        return self.state.should_stop

    @should_stop.setter
    def should_stop(self, value: bool) -> None:
        self.state.should_stop = bool(value)

    @property
    def stop_reason(self) -> StopReason | None:
        """Why the last fit ended (max_steps, max_epochs, max_time, a request, a signal...)."""
        return self.state.stop_reason

    @property
    def at_step_boundary(self) -> bool:
        """True when no gradient accumulation is in progress (checkpoints are only saved then)."""
        accumulate = self.state.accumulate_grad_batches or self.options.accumulate_grad_batches
        return accumulate == 1 or self.state.batches_done % accumulate == 0 or self.state.epoch_done

    @property
    def sanity_checking(self) -> bool:
        from .state import Stage

        return self.state.stage is Stage.SANITY_CHECKING

    @property
    def training(self) -> bool:
        from .state import Stage

        return self.state.stage is Stage.FITTING

    @property
    def validating(self) -> bool:
        from .state import Stage

        return self.state.stage is Stage.VALIDATING

    @property
    def testing(self) -> bool:
        from .state import Stage

        return self.state.stage is Stage.TESTING

    @property
    def predicting(self) -> bool:
        from .state import Stage

        return self.state.stage is Stage.PREDICTING

    @property
    def max_epochs(self) -> int | None:
        """``max_epochs`` as given, plus the epochs a callback added to the running fit (Lightning's view)."""
        epochs = self.options.max_epochs
        return epochs + self.state.extra_epochs if epochs is not None and epochs >= 0 else epochs

    @property
    def max_steps(self) -> int:
        return self.options.max_steps if self.options.max_steps is not None else -1

    # ---- outputs --------------------------------------------------------------------------------------
    @property
    def callback_metrics(self) -> dict[str, Any]:
        """The latest value of every metric (tensors, as in Lightning: ``float(m)`` or ``m.item()``)."""
        return self.state.callback_metrics

    @property
    def logged_metrics(self) -> dict[str, float]:
        return self.state.logged_metrics

    @property
    def progress_bar_metrics(self) -> dict[str, float]:
        # prog_bar step values wait on the device until read here (one transfer), as Lightning computes its own
        return settle_bar(self.state.progress_bar_metrics)

    @property
    def default_root_dir(self) -> Path:
        return self.options.root_dir

    @property
    def log_dir(self) -> Path:
        """This run's folder: the logger's; with no logger (``logger=False``), ``default_root_dir`` itself, as in
        Lightning (``LightningCLI`` writes ``config.yaml`` there, next to ``checkpoints/``)."""
        if self._log_dir is None:
            if not self._loggers:
                return self.default_root_dir
            for logger in self._loggers:
                folder = getattr(logger, "log_dir", None)
                if folder is not None:
                    self._log_dir = Path(folder)
                    break
            else:
                from ..loggers.base import next_version_dir

                self._log_dir = next_version_dir(self.default_root_dir)
        return self._log_dir

    @property
    def logger(self) -> Any:
        """The first logger (Lightning's ``trainer.logger``), or None."""
        return self._loggers[0] if self._loggers else None

    @property
    def loggers(self) -> list[Any]:
        return list(self._loggers)

    @property
    def checkpoint_callback(self) -> ModelCheckpoint | None:
        from ..callbacks import ModelCheckpoint

        return next((c for c in self.callbacks if isinstance(c, ModelCheckpoint)), None)

    @property
    def checkpoint_callbacks(self) -> list[ModelCheckpoint]:
        from ..callbacks import ModelCheckpoint

        return [c for c in self.callbacks if isinstance(c, ModelCheckpoint)]

    @property
    def early_stopping_callback(self) -> Any:
        from ..callbacks import EarlyStopping

        return next((c for c in self.callbacks if isinstance(c, EarlyStopping)), None)

    @property
    def metrics_path(self) -> Path | None:
        """Where the CSV metrics of the last run are, when one was written."""
        return self._run.csv_path if self._run is not None else None

    @property
    def lightning_module(self) -> torch.nn.Module | None:
        """The module of the current (or last) call, set before its hooks run, as in Lightning."""
        return self._module

    @property
    def model(self) -> torch.nn.Module | None:
        """The module as the strategy runs it (DDP's wrapper once prepared), else the module itself."""
        run = self._run
        if run is not None and run.module is self._module and run.prepared.wrapped is not None:
            return run.prepared.wrapped
        return self._module

    @property
    def datamodule(self) -> Any:
        return self._run.datamodule if self._run is not None else None

    @property
    def optimizers(self) -> list[torch.optim.Optimizer]:
        optim = self._run.optim if self._run is not None else None
        return list(optim.optimizers) if optim is not None else []

    @property
    def lr_scheduler_configs(self) -> list[Any]:
        """The loop's own list, as Lightning's is: a callback may replace a scheduler (StochasticWeightAveraging)."""
        optim = self._run.optim if self._run is not None else None
        return optim.schedulers if optim is not None else []

    @property
    def interrupted(self) -> bool:
        from .state import StopReason

        return self.state.stop_reason is StopReason.SIGNAL

    def _checkpoint_folders(self) -> list[Path]:
        folders = [Path(c.dirpath) for c in self.checkpoint_callbacks if c.dirpath is not None]
        folders.append(self.default_root_dir / "checkpoints")  # ModelCheckpoint's folder when there is no logger
        base = self.default_root_dir / "lightning_logs"
        if base.is_dir():
            folders += sorted(base.glob("version_*/checkpoints"))
        if self._log_dir is not None:
            folders.append(self._log_dir / "checkpoints")
        return list(dict.fromkeys(folders))

    def _model_or_last(self, model: torch.nn.Module | None, method: str) -> torch.nn.Module:
        if model is not None:
            return model
        if self._run is not None:
            return self._run.module
        from ..errors import MisconfigurationException

        raise MisconfigurationException(
            f"{method}() was called without a model and this Trainer has not fitted one: pass the model, "
            f"e.g. trainer.{method}(model, dataloaders)."
        )
