"""The Trainer: fits Lightning-style modules on the accelerator the selection rules chose.

The constructor only validates and selects (cheap, no device touched, nothing heavy imported); what a
call does is in :mod:`accelplug.trainer.stages` (setup, loop, teardown), the loops in
:mod:`accelplug.trainer.loops`, and the read-only views
(``global_step``, ``callback_metrics``...) in :mod:`~accelplug.trainer.properties`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from ..accelerator import Accelerator
from ..callbacks.base import Checkpoint
from ..callbacks.model_checkpoint import ModelCheckpoint
from ..checkpoint.file import is_url
from ..distributed.rank_zero import set_rank
from ..errors import MisconfigurationException
from ..launcher import adopt_environment, cluster_environment, relaunch_if_needed
from ..loggers.protocol import trainer_loggers
from ..profilers import Profiler
from ..selection import Selection, select
from .checkpointing.saving import attach_checkpoint_io
from .display.defaults import configure_callbacks
from .loops.objects import LoopObjects
from .options.arguments import (
    check_checkpointing,
    check_model,
    compile_options_for,
    path_in_datamodule_slot,
    profiler_for,
    require_tensorboard,
    warn_unknown_variables,
)
from .options.defaults import UNSET_AUTO, UNSET_FALSE, UNSET_ONE, UNSET_PRECISION, resolve_defaults
from .options.entries import TrainerOptions, validate_options
from .options.precision_and_sync import layer_sync_from, precision_from_plugin
from .process.environment import check_mps_fallback
from .properties import TrainerProperties
from .state import LoopState, Stage
from .views import TrainerViews

if TYPE_CHECKING:
    from ..strategies.base import Strategy
    from .process.interrupts import SignalGuard
    from .run import Run

__all__ = ["Trainer"]

_OPTION_NAMES = frozenset(TrainerOptions.__dataclass_fields__)


class Trainer(TrainerProperties, TrainerViews, LoopObjects):
    """Trains a ``torch.nn.Module`` written in Lightning's protocol on the chosen accelerator.

    The module needs ``training_step(batch, batch_idx)`` (a loss tensor, a dict with ``"loss"``, or None
    to skip the batch) and ``configure_optimizers()``; everything else of ``LightningModule`` is optional.
    Arguments not passed take their value from ``ACCELPLUG_*`` variables, then the config file.
    """

    def __init__(
        self,
        accelerator: str | Accelerator | type[Accelerator] = UNSET_AUTO,
        devices: int | str | list[int] | tuple[int, ...] = UNSET_AUTO,
        strategy: str | Strategy = UNSET_AUTO,
        precision: str | int | None = None,
        *,
        logger: Any = None,
        callbacks: list[Any] | Any | None = None,
        fast_dev_run: int | bool = False,
        max_epochs: int | None = None,
        min_epochs: int | None = None,
        max_steps: int | None = -1,
        min_steps: int | None = None,
        max_time: Any = None,
        limit_train_batches: float | None = None,
        limit_val_batches: float | None = None,
        limit_test_batches: float | None = None,
        limit_predict_batches: float | None = None,
        overfit_batches: float = 0.0,
        val_check_interval: float | None = None,
        check_val_every_n_epoch: int | None = 1,
        num_sanity_val_steps: int | None = None,
        log_every_n_steps: int | None = None,
        enable_checkpointing: bool | None = None,
        enable_progress_bar: bool | None = None,
        enable_model_summary: bool | None = None,
        accumulate_grad_batches: int = 1,
        gradient_clip_val: float | None = None,
        gradient_clip_algorithm: str | None = None,
        deterministic: bool | str | None = None,
        benchmark: bool | None = None,
        inference_mode: bool = True,
        use_distributed_sampler: bool = True,
        profiler: Any = None,
        detect_anomaly: bool = False,
        barebones: bool = False,
        plugins: Any = None,
        sync_batchnorm: bool = False,
        reload_dataloaders_every_n_epochs: int = 0,
        default_root_dir: str | os.PathLike[str] | None = None,
        enable_autolog_hparams: bool = True,
        model_registry: Any = None,
        num_nodes: int = UNSET_ONE,
        mps_fallback: bool = UNSET_FALSE,
        seed: int | None = None,
        compile: bool | str | dict[str, Any] = False,
        nonfinite_loss: str = "warn",
        **unknown: Any,
    ) -> None:
        given = {name: value for name, value in locals().items() if name in _OPTION_NAMES}
        #: Lightning keeps these two as given (``trainer.fast_dev_run`` is True, not 1).
        self._given = {"fast_dev_run": fast_dev_run, "gradient_clip_algorithm": gradient_clip_algorithm}
        precision_given = precision is not None
        precision = UNSET_PRECISION if precision is None else precision
        defaults = resolve_defaults(
            accelerator=accelerator,
            devices=devices,
            strategy=strategy,
            precision=precision,
            num_nodes=num_nodes,
            mps_fallback=mps_fallback,
        )
        chosen = defaults.values
        given.update(num_nodes=chosen["num_nodes"], mps_fallback=chosen["mps_fallback"])
        self.options: TrainerOptions = validate_options(**given, **unknown)
        plugin_precision = self.options.plugins.precision
        if plugin_precision is not None:
            chosen["precision"] = precision_from_plugin(plugin_precision, precision if precision_given else None)
        self._layer_sync = layer_sync_from(self.options.plugins.layer_sync, self.options.sync_batchnorm)
        self.origins = defaults.origins
        warn_unknown_variables()
        check_mps_fallback(self.options.mps_fallback)
        if self.options.logger == "tensorboard":
            require_tensorboard()
        self.selection: Selection = select(
            chosen["accelerator"],
            chosen["devices"],
            chosen["strategy"],
            chosen["precision"],
            num_nodes=self.options.num_nodes,
        )
        # Who started this process (srun, mpirun, torchrun...): its ranks hold from here on, as in Lightning.
        self._cluster_environment = cluster_environment(self.options.plugins.cluster_environment)
        adopt_environment(self._cluster_environment, self.num_devices, self.options.num_nodes)
        from ..registry import get_registry
        from ..strategies.compiling import check_compile_support

        check_compile_support(self.root_device.type, self.options.compile)
        registry = get_registry()
        chosen_strategy = self.selection.strategy_object
        self._strategy = chosen_strategy or registry.get_strategy(self.selection.strategy)()
        attach_checkpoint_io(self._strategy, self.options.plugins.checkpoint_io)
        self._precision = plugin_precision or registry.get_precision(self.selection.precision)(self.root_device.type)
        self._strategy.precision_plugin = self._precision
        self.callbacks: list[Any] = list(self.options.callbacks)
        check_checkpointing(self.options, self.callbacks)
        if self.options.enable_checkpointing and not any(isinstance(c, Checkpoint) for c in self.callbacks):
            self.callbacks.append(ModelCheckpoint())
        self.callbacks = configure_callbacks(self.options, self.callbacks)
        #: Lightning's attribute: a PassThroughProfiler (and the Trainer's lean path) unless one was asked for
        self.profiler: Profiler = profiler_for(profiler, self.options)
        self.state = LoopState()
        #: What the run changed in torch's global settings (reported once at setup).
        self.setup_notes: list[str] = []
        self._log_dir: Path | None = None
        # Made here, as Lightning does, so `trainer.logger._log_graph = True` works before fit.
        root_given = self.options.default_root_dir
        root = os.fspath(root_given) if root_given is not None and is_url(root_given) else self.default_root_dir
        self._loggers: list[Any] = trainer_loggers(self.options.logger, root)
        self._run: Run | None = None
        self._module: torch.nn.Module | None = None
        self._signals: SignalGuard | None = None
        set_rank(self.global_rank)  # rank_zero_only, for this script's helpers as Lightning's Trainer does

    # ---- running --------------------------------------------------------------------------------------
    def fit(
        self,
        model: torch.nn.Module,
        train_dataloaders: Any = None,
        val_dataloaders: Any = None,
        datamodule: Any = None,
        ckpt_path: str | os.PathLike[str] | None = None,
        weights_only: bool | None = None,
    ) -> None:
        """Train ``model``; with ``ckpt_path`` (a file or ``"last"``), continue exactly where it left off.

        ``weights_only=None`` loads as torch does by default (``True``: tensors and plain values only).
        """
        from ..data.sources import split_datamodule
        from .stages import StageCall, run_fit

        compile_options = compile_options_for(model, self.options.compile)
        model = check_model(model, "fit", "training_step", "configure_optimizers")
        train_dataloaders, datamodule = split_datamodule(train_dataloaders, datamodule, "fit")
        loaders = (train_dataloaders, val_dataloaders)
        call = StageCall(model, *loaders, datamodule, ckpt_path, weights_only is not False, compile=compile_options)
        self._here_or_forked(model, lambda: run_fit(self, call))

    def validate(
        self,
        model: torch.nn.Module | None = None,
        dataloaders: Any = None,
        ckpt_path: str | os.PathLike[str] | None = None,
        verbose: bool = True,
        datamodule: Any = None,
        weights_only: bool | None = None,
    ) -> list[dict[str, float]]:
        """Run ``validation_step`` over the data; the averaged metrics, one dict per dataloader."""
        options = {"ckpt_path": ckpt_path, "verbose": verbose, "weights_only": weights_only is not False}
        return self._evaluate(Stage.VALIDATING, model, dataloaders, datamodule, **options)

    def test(
        self,
        model: torch.nn.Module | None = None,
        dataloaders: Any = None,
        ckpt_path: str | os.PathLike[str] | None = None,
        verbose: bool = True,
        datamodule: Any = None,
        weights_only: bool | None = None,
    ) -> list[dict[str, float]]:
        """Run ``test_step`` over the data; the averaged metrics, one dict per dataloader."""
        options = {"ckpt_path": ckpt_path, "verbose": verbose, "weights_only": weights_only is not False}
        return self._evaluate(Stage.TESTING, model, dataloaders, datamodule, **options)

    def predict(
        self,
        model: torch.nn.Module | None = None,
        dataloaders: Any = None,
        datamodule: Any = None,
        return_predictions: bool | None = None,
        ckpt_path: str | os.PathLike[str] | None = None,
        weights_only: bool | None = None,
    ) -> Any:
        """``predict_step`` (or ``forward``) outputs for every batch, in order (a list per dataloader)."""
        from .stages import StageCall, run_prediction

        call = self._call("predict", model, dataloaders, datamodule, ckpt_path)
        self.state.predict.return_predictions = return_predictions is not False
        stage_call = StageCall(**{**call, "weights_only": weights_only is not False})
        outputs = self._here_or_forked(call["module"], lambda: run_prediction(self, stage_call))
        return None if return_predictions is False else outputs

    def _evaluate(
        self, stage: Stage, model: Any, dataloaders: Any, datamodule: Any, **options: Any
    ) -> list[dict[str, float]]:
        from .stages import StageCall, run_evaluation

        method = "test" if stage is Stage.TESTING else "validate"
        call = self._call(method, model, dataloaders, datamodule, options.pop("ckpt_path"))
        stage_call = StageCall(**call, **options)
        results: list[dict[str, float]] = self._here_or_forked(
            call["module"], lambda: run_evaluation(self, stage, stage_call)
        )
        return results

    def _call(self, method: str, model: Any, dataloaders: Any, datamodule: Any, ckpt_path: Any) -> dict[str, Any]:
        """Check a validate/test/predict call's arguments (Lightning's positional habits included)."""
        from ..data.sources import split_datamodule

        datamodule, ckpt_path = path_in_datamodule_slot(datamodule, ckpt_path)
        step = {"test": "test_step", "validate": "validation_step"}.get(method)
        module = check_model(self._model_or_last(model, method), method, *([step] if step else []))
        dataloaders, datamodule = split_datamodule(dataloaders, datamodule, method)
        return {"module": module, "dataloaders": dataloaders, "datamodule": datamodule, "ckpt_path": ckpt_path}

    def _here_or_forked(self, model: torch.nn.Module, work: Callable[[], Any]) -> Any:
        """``work()`` in this process (re-launched first where DDP needs it), or with ``ddp_notebook``/``ddp_fork``
        in one forked process per device, rank 0's result and weights coming back (``process.forking``)."""
        if self.selection.start_method == "fork" and "RANK" not in os.environ:
            from .process.forking import run_in_forked_processes

            return run_in_forked_processes(self, model, work, self.num_devices)
        relaunch_if_needed(
            self._strategy, self.accelerator.name, self.num_devices, self.options.num_nodes, self._cluster_environment
        )
        return work()

    def save_checkpoint(
        self, filepath: str | os.PathLike[str], weights_only: bool | None = None, storage_options: Any = None
    ) -> Path | str:
        """Write model, optimizers, schedulers, scaler, loop position and RNG states atomically.

        ``weights_only=True`` leaves the optimizer and scheduler states out. Under DDP every rank must call
        this (it ends with a barrier); only rank 0 writes. ``filepath`` may be an fsspec URL
        (``s3://bucket/model.ckpt``), returned as given.
        """
        from .checkpointing.saving import save_run_checkpoint

        if self._run is None:
            raise MisconfigurationException(
                "save_checkpoint() needs a model and its optimizers: call it during or after trainer.fit()."
            )
        with self.profiler.profile("save_checkpoint"):
            return save_run_checkpoint(self._run, self._strategy, filepath, weights_only, storage_options)
