"""The Trainer: fits Lightning-style modules on the accelerator the selection rules chose.

The constructor only validates and selects (cheap, no device touched, nothing heavy imported); a
run's machinery (process group, loggers, progress bar) is built when ``fit``/``validate``/``predict``
starts. The training loop itself lives in :mod:`accelplug.trainer.loop`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from ..accelerator import Accelerator
from ..errors import MisconfigurationException
from ..selection import Selection, select
from .callbacks import ModelCheckpoint
from .environment import check_mps_fallback
from .options import TrainerOptions, validate_options

if TYPE_CHECKING:
    from ..strategies.base import Strategy
    from .loop import Run

__all__ = ["Trainer"]

#: Checkpoint format written by this version (stored under ``"accelplug_checkpoint"``).
CHECKPOINT_FORMAT = 1


class Trainer:
    """Trains a ``torch.nn.Module`` written in Lightning's protocol on the chosen accelerator.

    The module needs ``training_step(batch, batch_idx)`` (a loss tensor or a dict with ``"loss"``)
    and ``configure_optimizers()``; ``validation_step`` and ``predict_step`` are optional.
    """

    def __init__(
        self,
        accelerator: str | Accelerator | type[Accelerator] = "auto",
        devices: int | str | list[int] | tuple[int, ...] = "auto",
        strategy: str = "auto",
        precision: str | int = "32-true",
        *,
        max_epochs: int | None = None,
        max_steps: int | None = -1,
        accumulate_grad_batches: int = 1,
        gradient_clip_val: float | None = None,
        gradient_clip_algorithm: str = "norm",
        val_check_interval: float | None = None,
        check_val_every_n_epoch: int = 1,
        limit_train_batches: float = 1.0,
        limit_val_batches: float = 1.0,
        log_every_n_steps: int = 50,
        default_root_dir: str | os.PathLike[str] | None = None,
        seed: int | None = None,
        callbacks: list[Any] | Any | None = None,
        enable_progress_bar: bool = True,
        enable_checkpointing: bool = True,
        logger: bool | str = True,
        mps_fallback: bool = False,
        num_nodes: int = 1,
    ) -> None:
        self.options: TrainerOptions = validate_options(
            max_epochs=max_epochs,
            max_steps=max_steps,
            accumulate_grad_batches=accumulate_grad_batches,
            gradient_clip_val=gradient_clip_val,
            gradient_clip_algorithm=gradient_clip_algorithm,
            val_check_interval=val_check_interval,
            check_val_every_n_epoch=check_val_every_n_epoch,
            limit_train_batches=limit_train_batches,
            limit_val_batches=limit_val_batches,
            log_every_n_steps=log_every_n_steps,
            default_root_dir=default_root_dir,
            seed=seed,
            callbacks=callbacks,
            enable_progress_bar=enable_progress_bar,
            enable_checkpointing=enable_checkpointing,
            logger=logger,
            mps_fallback=mps_fallback,
            num_nodes=num_nodes,
        )
        check_mps_fallback(mps_fallback)
        if logger == "tensorboard":
            _require_tensorboard()
        self.selection: Selection = select(accelerator, devices, strategy, precision)
        from ..registry import get_registry

        self._strategy: Strategy = get_registry().get_strategy(self.selection.strategy)()
        self.callbacks: list[Any] = list(self.options.callbacks or [])
        if enable_checkpointing and not any(isinstance(c, ModelCheckpoint) for c in self.callbacks):
            self.callbacks.append(ModelCheckpoint())
        #: Optimizer steps taken so far (restored by a resume).
        self.global_step = 0
        #: The epoch being trained (0-based).
        self.current_epoch = 0
        #: The latest averaged metrics (training at logging steps, validation at its end), as floats.
        self.callback_metrics: dict[str, float] = {}
        #: A callback may set this to end fit after the current step.
        self.should_stop = False
        #: True right after an optimizer step (callbacks save checkpoints only then).
        self.at_step_boundary = True
        #: What the run changed in torch's global settings (reported once at setup).
        self.setup_notes: list[str] = []
        self._log_dir: Path | None = None
        self._run: Run | None = None

    # ---- what the selection decided ------------------------------------------------------------
    @property
    def accelerator(self) -> Accelerator:
        return self.selection.accelerator

    @property
    def strategy(self) -> Strategy:
        return self._strategy

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
    def precision(self) -> str:
        return self.selection.precision

    @property
    def world_size(self) -> int:
        return self._strategy.world_size

    @property
    def global_rank(self) -> int:
        return self._strategy.global_rank

    @property
    def is_global_zero(self) -> bool:
        return self._strategy.is_global_zero

    @property
    def default_root_dir(self) -> Path:
        root = self.options.default_root_dir
        return Path(root).expanduser() if root is not None else Path.cwd()

    @property
    def log_dir(self) -> Path:
        """This run's folder: ``default_root_dir/accelplug_logs/version_N`` (chosen when fit starts)."""
        if self._log_dir is None:
            from .loggers import next_version_dir

            self._log_dir = next_version_dir(self.default_root_dir)
        return self._log_dir

    @property
    def checkpoint_callback(self) -> ModelCheckpoint | None:
        return next((c for c in self.callbacks if isinstance(c, ModelCheckpoint)), None)

    @property
    def metrics_path(self) -> Path | None:
        """Where the CSV metrics of the last run are, when one was written."""
        run = self._run
        return run.csv_path if run is not None else None

    # ---- running --------------------------------------------------------------------------------
    def fit(
        self,
        model: torch.nn.Module,
        train_dataloaders: Any,
        val_dataloaders: Any = None,
        ckpt_path: str | os.PathLike[str] | None = None,
        *,
        weights_only: bool = True,
    ) -> None:
        """Train ``model``; with ``ckpt_path``, continue exactly where that checkpoint left off."""
        from .loop import fit_loop

        _require_methods(model, "training_step", "configure_optimizers")
        self._relaunch_if_needed()
        fit_loop(self, model, train_dataloaders, val_dataloaders, ckpt_path, weights_only)

    def validate(self, model: torch.nn.Module, dataloaders: Any, *, verbose: bool = True) -> list[dict[str, float]]:
        """Run ``validation_step`` over ``dataloaders``; returns the averaged metrics."""
        from .loop import validate_only

        _require_methods(model, "validation_step")
        self._relaunch_if_needed()
        return [validate_only(self, model, dataloaders, verbose)]

    def predict(self, model: torch.nn.Module, dataloaders: Any) -> list[Any]:
        """``predict_step`` (or ``forward``) outputs for every batch of ``dataloaders``, in order."""
        from .loop import predict_only

        self._relaunch_if_needed()
        return predict_only(self, model, dataloaders)

    def save_checkpoint(self, path: str | os.PathLike[str]) -> Path:
        """Write model, optimizers, schedulers, scaler, loop position and RNG states atomically.

        Under DDP every rank must call this (it ends with a barrier); only rank 0 writes.
        """
        from .loop import checkpoint_state

        if self._run is None:
            raise MisconfigurationException(
                "save_checkpoint() needs a model and its optimizers: call it during or after trainer.fit()."
            )
        target = Path(path).expanduser().resolve()
        if self.is_global_zero:
            from .checkpoint import atomic_save

            atomic_save(checkpoint_state(self, self._run), target)
        self._strategy.barrier()
        return target

    # ---- launching ------------------------------------------------------------------------------
    def _relaunch_if_needed(self) -> None:
        """Start one process per device when DDP was asked for in a plain ``python script.py``."""
        from ..strategies.ddp import launched_by_torchrun

        if not self._strategy.is_distributed:
            return
        if launched_by_torchrun():
            self._check_world_size()
            return
        script = _main_script()
        how = (
            f"start it with `accelplug launch --accelerator {self.accelerator.name} --devices {self.num_devices} "
            f"script.py` (or `torchrun --nproc-per-node {self.num_devices} script.py`)"
        )
        if script is None:
            raise MisconfigurationException(
                f"strategy={self.strategy.name!r} with {self.num_devices} devices runs one process per device, "
                f"and this interpreter was not started from a script file that could be re-launched; {how}."
            )
        from ..launch import relaunch_script

        print(
            f"accelplug: re-launching {script.name} as {self.num_devices} processes ({self.strategy.name}); "
            f"to control this yourself, {how}.",
            file=sys.stderr,
            flush=True,
        )
        raise SystemExit(relaunch_script(script, sys.argv[1:], self.num_devices, self.accelerator.name))

    def _check_world_size(self) -> None:
        """With ``num_nodes`` given, the launcher's ``WORLD_SIZE`` must be nodes x devices per node."""
        nodes = self.options.num_nodes
        world = int(os.environ.get("WORLD_SIZE", "1"))
        if nodes > 1 and world != nodes * self.num_devices:
            raise MisconfigurationException(
                f"num_nodes={nodes} with {self.num_devices} device(s) per node means {nodes * self.num_devices} "
                f"processes, but the launcher started WORLD_SIZE={world}; make --nnodes/--devices of "
                "`accelplug launch` match the Trainer's num_nodes/devices."
            )


def _require_tensorboard() -> None:
    """Fail at construction, not after setup, when TensorBoard logging cannot work."""
    import importlib.util

    if importlib.util.find_spec("tensorboard") is None:
        raise MisconfigurationException(
            "logger='tensorboard' needs the tensorboard package, which is not installed: "
            'pip install "accelplug[tensorboard]" (or use logger=True for the CSV file only).'
        )


def _main_script() -> Path | None:
    """The file run as ``python file.py`` (not ``-m``, ``-c`` or an interactive session), if any."""
    main = sys.modules.get("__main__")
    main_file = getattr(main, "__file__", None)
    if main is None or main_file is None or getattr(main, "__spec__", None) is not None:
        return None
    path = Path(main_file).resolve()
    return path if path.is_file() and path.suffix == ".py" else None


def _require_methods(model: object, *names: str) -> None:
    if not isinstance(model, torch.nn.Module):
        raise MisconfigurationException(
            f"model must be a torch.nn.Module with training_step/configure_optimizers; got {type(model).__name__}."
        )
    missing = [n for n in names if not callable(getattr(model, n, None))]
    if missing:
        raise MisconfigurationException(
            f"{type(model).__name__} has no {', '.join(missing)}() method, which this Trainer call needs."
        )
