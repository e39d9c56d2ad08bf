"""The Trainer: fits Lightning-style modules on the accelerator the selection rules chose.

One class in one file, in sections: construction (validate and select; cheap, no device touched, nothing heavy
imported), the calls (``fit``, ``validate``, ``test``, ``predict``, ``save_checkpoint``), then Lightning's
read-only names: what the selection decided, where the run stands and what it produced, the options as
attributes, the loaders and batch counts of the calls, the loop objects (``fit_loop``...), and the small tools
(``print``, ``init_module``). What a call does is in :mod:`accelplug.trainer._stages` (setup, loop, teardown)
and the loops in :mod:`accelplug.trainer.loops`. Every counter is a view of the
:class:`~accelplug.trainer.state.LoopState` the loops update; the few that callbacks may set (``should_stop``)
write through to it. The loaders and counts are what the loops recorded in ``LoopState.data``: the loaders as
this process iterates them (sharded under DDP), the counts after the ``limit_*_batches`` options, ``inf`` where
a loader has no length (Lightning's values).
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import math
import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import torch

from .._import_paths import is_instance_if_loaded
from ..accelerator import Accelerator
from ..callbacks.base import Checkpoint
from ..callbacks.model_checkpoint import ModelCheckpoint
from ..distributed.rank_zero import set_rank
from ..errors import MisconfigurationException
from ..loggers.logger import DummyLogger
from ..loggers.protocol import trainer_loggers
from ..overrides import overrides
from ..precision.mixed import announce_amp
from ..profilers import Profiler
from ..selection import (
    RunSetup,
    Selection,
    adopt_environment,
    attach_environment,
    build,
    cluster_environment,
    cpu_half_as_bf16,
    give_strategy_its_plan,
)
from ..strategies.base import plugin_of
from .display.defaults import DisplayProgressBar, configure_callbacks, given_timer, progress_bar_callback
from .display.device_info import report_devices
from .options.arguments import (
    check_checkpointing,
    check_manual_options,
    check_model,
    check_predict_model,
    compile_options_for,
    path_in_datamodule_slot,
    profiler_for,
    require_tensorboard,
    warn_fit_validation,
    warn_unknown_variables,
)
from .options.defaults import (
    UNSET_AUTO,
    UNSET_FALSE,
    UNSET_ONE,
    UNSET_PRECISION,
    lightning_env_defaults,
    resolve_defaults,
)
from .options.entries import TrainerOptions, announce_limits, validate_options
from .options.precision_and_sync import layer_sync_from
from .process.environment import check_mps_fallback
from .state import LoopState, RunningStage, Stage

if TYPE_CHECKING:
    from ..precision.base import NumericPrecision
    from ..strategies.base import Strategy
    from ._run import Run
    from .loops._views import EvaluationLoopView, FitLoopView, Host, PredictionLoopView
    from .process.interrupts import SignalGuard
    from .state import StopReason

__all__ = ["Trainer"]

_OPTION_NAMES = frozenset(TrainerOptions.__dataclass_fields__)


def _one_or_all(loaders: list[Any] | None) -> Any:
    if loaders is None:
        return None
    return loaders[0] if len(loaders) == 1 else list(loaders)


_V = TypeVar("_V")


def _is_file_logger(logger: Any) -> bool:
    """A ``CSVLogger`` or ``TensorBoardLogger``: each module is looked up, not imported, since a logger of a class
    not loaded cannot be one of its instances (``Trainer()`` loads only the logger it makes)."""
    return is_instance_if_loaded(logger, "accelplug.loggers.csv_logs", "CSVLogger") or is_instance_if_loaded(
        logger, "accelplug.loggers.tensorboard", "TensorBoardLogger"
    )


class Trainer:
    """Trains a ``torch.nn.Module`` written in Lightning's protocol on the chosen accelerator.

    The module needs ``training_step(batch, batch_idx)`` (a loss tensor, a dict with ``"loss"``, or None
    to skip the batch) and ``configure_optimizers()``; everything else of ``LightningModule`` is optional.
    Arguments not passed take their value from ``ACCELPLUG_*`` variables, then the config file.
    """

    # ---- construction: validate and select, nothing heavy imported -----------------------------------------
    @lightning_env_defaults
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
        val_check_interval: int | float | str | datetime.timedelta | dict[str, int] | None = None,
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
        choices = defaults.choices
        given.update(num_nodes=choices.num_nodes, mps_fallback=choices.mps_fallback)
        self.options: TrainerOptions = validate_options(**given, **unknown)
        self._layer_sync = layer_sync_from(self.options.plugins.layer_sync, self.options.sync_batchnorm)
        self.origins = defaults.origins
        warn_unknown_variables()
        check_mps_fallback(self.options.mps_fallback)
        if self.options.logger == "tensorboard":
            require_tensorboard()
        # One way from the arguments to the run's objects, shared with Fabric (selection.build).
        # A strategy built with a precision plugin or cluster environment (Lightning's form) gives them to the run;
        # its precision plugin wins over precision= (both in plugins= and on the strategy is refused).
        given_plugins = self.options.plugins
        plugins = dataclasses.replace(
            given_plugins,
            precision=plugin_of(strategy, "precision_plugin", given_plugins.precision),
            cluster_environment=plugin_of(strategy, "cluster_environment", given_plugins.cluster_environment),
        )
        self._setup: RunSetup = build(
            dataclasses.replace(choices, num_nodes=self.options.num_nodes),
            plugins,
            precision_given=precision_given and plugins.precision is given_plugins.precision,
            adjust=None if plugins.precision is not None else cpu_half_as_bf16("Trainer"),
        )
        self.selection: Selection = self._setup.selection
        # Who started this process (srun, mpirun, torchrun...): its ranks hold from here on, as in Lightning.
        self._cluster_environment = cluster_environment(self._setup.cluster_environment)
        adopt_environment(self._cluster_environment, self.num_devices, self.options.num_nodes)
        if self.options.compile is not None:  # torch.compile's checks load with a run that compiles
            from ..strategies.compiling import check_compile_support

            check_compile_support(self.root_device.type, self.options.compile)
        self._strategy = self._setup.strategy
        self._precision = self._setup.precision
        attach_environment(self._strategy, self._cluster_environment)
        give_strategy_its_plan(self._strategy, self.selection, self.options.num_nodes)
        self.callbacks: list[Any] = list(self.options.callbacks)
        check_checkpointing(self.options, self.callbacks)
        if given_timer(self.options.max_time, self.callbacks):  # the user's Timer governs the time, as in Lightning
            self.options = dataclasses.replace(self.options, max_time=None)
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
        root = self.default_root_dir
        if root_given is not None:
            from ..checkpoint.file import is_url

            root = os.fspath(root_given) if is_url(root_given) else root
        self._loggers: list[Any] = trainer_loggers(self.options.logger, root)
        self._run: Run | None = None
        self._stage_run: Run | None = None  # the call running now (fit, validate, test or predict)
        #: The datamodule of the current (or last) call, set before its first hook (``setup``).
        self._datamodule: Any = None
        self._display_bar: DisplayProgressBar | None = None
        self._module: torch.nn.Module | None = None
        self._signals: SignalGuard | None = None
        set_rank(self.global_rank)  # rank_zero_only, for this script's helpers as Lightning's Trainer does
        report_devices(self.selection.accelerator, self.num_devices)  # Lightning's GPU/TPU lines and advice
        announce_amp(self.selection.precision, "accelplug.trainer")
        announce_limits(given)

    # ---- running -------------------------------------------------------------------------------------------
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
        from ._stages import StageCall, run_fit

        compile_options = compile_options_for(model, self.options.compile)
        model = check_model(model, "fit", "training_step", "configure_optimizers")
        train_dataloaders, datamodule = split_datamodule(train_dataloaders, datamodule, "fit")
        warn_fit_validation(model, val_dataloaders is not None, datamodule)
        options = self.options
        automatic = bool(getattr(model, "automatic_optimization", True))
        check_manual_options(automatic, options.accumulate_grad_batches, options.gradient_clip_val)
        loaders = (train_dataloaders, val_dataloaders)
        call = StageCall(model, *loaders, datamodule, ckpt_path, weights_only, compile=compile_options)
        self._here_or_forked(model, functools.partial(run_fit, self, call), fitting=True)

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
        options = {"ckpt_path": ckpt_path, "verbose": verbose, "weights_only": weights_only}
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
        options = {"ckpt_path": ckpt_path, "verbose": verbose, "weights_only": weights_only}
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
        """``predict_step`` (or ``forward``) outputs for every batch, in order (a list per dataloader).

        Under a strategy that spawns or forks its processes nothing comes back (``None``), as in Lightning: a
        ``BasePredictionWriter`` writes each process's predictions instead."""
        from ._stages import StageCall, run_prediction

        if self.selection.start_method != "popen":  # Lightning's rule for ddp_spawn/ddp_fork/ddp_notebook
            if return_predictions:
                from .options.arguments import PredictionsNotReturnable

                raise PredictionsNotReturnable(
                    "`return_predictions` should be set to `False` when using the strategies that spawn or fork: "
                    f"got return_predictions=True with a {type(self._strategy).__name__} that starts them; their "
                    "predictions are not sent back. Use a BasePredictionWriter callback, or strategy='ddp'."
                )
            return_predictions = False
        call = self._call("predict", model, dataloaders, datamodule, ckpt_path)
        self.state.predict.return_predictions = return_predictions is not False
        stage_call = StageCall(**{**call, "weights_only": weights_only})
        outputs = self._here_or_forked(call["module"], functools.partial(run_prediction, self, stage_call))
        return None if return_predictions is False else outputs

    def _evaluate(
        self, stage: Stage, model: Any, dataloaders: Any, datamodule: Any, **options: Any
    ) -> list[dict[str, float]]:
        from ._stages import StageCall, run_evaluation

        method = "test" if stage is Stage.TESTING else "validate"
        call = self._call(method, model, dataloaders, datamodule, options.pop("ckpt_path"))
        stage_call = StageCall(**call, **options)
        results: list[dict[str, float]] = self._here_or_forked(
            call["module"], functools.partial(run_evaluation, self, stage, stage_call)
        )
        return results

    def _call(self, method: str, model: Any, dataloaders: Any, datamodule: Any, ckpt_path: Any) -> dict[str, Any]:
        """Check a validate/test/predict call's arguments (Lightning's positional habits included)."""
        from ..data.sources import split_datamodule

        datamodule, ckpt_path = path_in_datamodule_slot(datamodule, ckpt_path)
        step = {"test": "test_step", "validate": "validation_step"}.get(method)
        module = check_model(self._model_or_last(model, method), method, *([step] if step else []))
        dataloaders, datamodule = split_datamodule(dataloaders, datamodule, method)
        if method == "predict" and dataloaders is None and datamodule is None:
            from ..core.module import LightningModule

            if not isinstance(module, LightningModule):  # a plain module predicts only the data it is given
                check_model(module, method, "predict_dataloader")
        if method == "predict":
            check_predict_model(module)
        given = {"model_given": model is not None}
        return {"module": module, "dataloaders": dataloaders, "datamodule": datamodule, "ckpt_path": ckpt_path, **given}

    def _here_or_forked(self, model: torch.nn.Module, work: Callable[[], Any], *, fitting: bool = False) -> Any:
        """``work()`` in this process (re-launched first where DDP needs it), or with ``ddp_spawn``/``ddp_fork``/
        ``ddp_notebook`` in one new process per device, rank 0's result and weights coming back (``process.spawning``).
        ``work`` is a ``functools.partial`` of a module-level function, so that ``spawn`` can pickle it."""
        if fitting and "RANK" not in os.environ:
            from .process.spawning import one_fit_per_spawning_trainer

            with one_fit_per_spawning_trainer(self, self._strategy, self.selection.strategy):
                return self._here_or_forked(model, work)
        if self.selection.start_method != "popen" and "RANK" not in os.environ:
            from .process.spawning import run_in_local_processes

            self._module = model  # this process's trainer.lightning_module, as in Lightning (rank 0's weights return)
            return run_in_local_processes(self, model, work, self.selection.start_method, self.selection.strategy)
        from ..launcher import relaunch_if_needed

        relaunch_if_needed(
            self._strategy, self.accelerator.name, self.num_devices, self.options.num_nodes, self._cluster_environment
        )
        return work()

    def save_checkpoint(
        self, filepath: str | os.PathLike[str], weights_only: bool | None = None, storage_options: Any = None
    ) -> Path | str:
        """Write model, optimizers, schedulers, scaler, loop position and RNG states atomically.

        ``weights_only=True`` leaves the optimizer and scheduler states out. Before any call, a module connected by
        hand (``trainer.strategy.connect(model)``) is saved at loop position zero, without optimizers (Lightning's
        behaviour); with no module at all it raises an ``AttributeError``. Under DDP every rank must call
        this (it ends with a barrier); only rank 0 writes. ``filepath`` may be an fsspec URL
        (``s3://bucket/model.ckpt``), returned as given.
        """
        from .checkpointing.saving import connected_source, save_run_checkpoint

        source: Any = self._run
        if source is None:
            connected = self._strategy.lightning_module
            if connected is None:
                from .options.arguments import NoModelAttached

                raise NoModelAttached(
                    "Saving a checkpoint is only possible if a model is attached to the Trainer: call "
                    "save_checkpoint() during or after trainer.fit() (or validate/test/predict), or attach the "
                    "module first with trainer.strategy.connect(model)."
                )
            source = connected_source(self, connected)  # a run at its start, as Lightning saves it
        with self.profiler.profile("save_checkpoint"):
            return save_run_checkpoint(source, self._strategy, filepath, weights_only, storage_options)

    # ---- what the selection decided ------------------------------------------------------------------------
    @property
    def accelerator(self) -> Accelerator:
        return self.selection.accelerator

    @property
    def strategy(self) -> Strategy:
        return self._strategy

    @property
    def precision_plugin(self) -> NumericPrecision:
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
        """This machine's index in the job, as the strategy's cluster environment answers it (0 on one process)."""
        return int(getattr(self._strategy, "node_rank", 0))

    @property
    def is_global_zero(self) -> bool:
        return self._strategy.is_global_zero

    # ---- where the run stands ------------------------------------------------------------------------------
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

        return self.state.stage is RunningStage.SANITY_CHECKING

    @property
    def training(self) -> bool:

        return self.state.stage is RunningStage.TRAINING

    @property
    def validating(self) -> bool:

        return self.state.stage is RunningStage.VALIDATING

    @property
    def testing(self) -> bool:

        return self.state.stage is RunningStage.TESTING

    @property
    def predicting(self) -> bool:

        return self.state.stage is RunningStage.PREDICTING

    @property
    def max_epochs(self) -> int | None:
        """``max_epochs`` as given (once a fit started, as it reads an unset one: 1000, or -1 when ``max_steps`` or a
        time limit bounds it), plus the epochs a callback added to the running fit (Lightning's view)."""
        epochs = self.fit_loop.max_epochs
        return epochs + self.state.extra_epochs if epochs is not None and epochs >= 0 else epochs

    @property
    def max_steps(self) -> int:
        return self.options.max_steps if self.options.max_steps is not None else -1

    # ---- outputs -------------------------------------------------------------------------------------------
    @property
    def callback_metrics(self) -> dict[str, Any]:
        """The latest value of every metric (tensors, as in Lightning: ``float(m)`` or ``m.item()``)."""
        return self.state.callback_metrics

    @property
    def logged_metrics(self) -> dict[str, Any]:
        """What went to the loggers last, by name (scalar tensors, as in Lightning)."""
        return self.state.logged_metrics

    @property
    def progress_bar_metrics(self) -> dict[str, float]:
        from .logging.collector import settle_bar

        # prog_bar step values wait on the device until read here (one transfer), as Lightning computes its own
        return settle_bar(self.state.progress_bar_metrics)

    @property
    def default_root_dir(self) -> str:
        """The root folder as Lightning gives it: a string (``os.path`` style, user folder expanded)."""
        return os.fspath(self.options.root_dir)

    @property
    def log_dir(self) -> str:
        """This run's folder: the logger's; with no logger (``logger=False``), ``default_root_dir`` itself, as in
        Lightning (``LightningCLI`` writes ``config.yaml`` there, next to ``checkpoints/``). A string, as
        Lightning's: scripts join it with ``+`` and write it to JSON."""
        return os.fspath(self._log_path())

    def _log_path(self) -> Path:
        if self._log_dir is None:
            if not self._loggers or isinstance(self._loggers[0], DummyLogger):  # fast_dev_run: nothing is written
                return self.options.root_dir
            first = self._loggers[0]
            # Lightning's rule: a file logger's log_dir, any other logger's save_dir; failing those (None, or not
            # a path: a stand-in object), the first logger that has a log_dir folder
            attribute = "log_dir" if _is_file_logger(first) else "save_dir"
            chosen = getattr(first, attribute, None)
            folders = [chosen, *(getattr(logger, "log_dir", None) for logger in self._loggers)]
            folder = next((f for f in folders if isinstance(f, (str, os.PathLike))), None)
            if folder is not None:
                self._log_dir = Path(folder)
            else:
                from ..loggers._files import next_version_dir

                self._log_dir = next_version_dir(self.options.root_dir)
        return self._log_dir

    @property
    def logger(self) -> Any:
        """The first logger (Lightning's ``trainer.logger``), or None."""
        return self._loggers[0] if self._loggers else None

    @logger.setter
    def logger(self, logger: Any) -> None:
        """Replace the loggers by this one (None: no logger), as Lightning's setter does; the next call logs there."""
        self._set_loggers([] if logger is None else [logger])

    @property
    def loggers(self) -> list[Any]:
        return list(self._loggers)

    @loggers.setter
    def loggers(self, loggers: list[Any] | None) -> None:
        self._set_loggers(list(loggers) if loggers else [])

    def _set_loggers(self, loggers: list[Any]) -> None:
        self._loggers = loggers
        self._log_dir = None  # the folder is the new first logger's

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
        """The module connected to the strategy (Lightning's answer: ``trainer.strategy.connect(model)`` by hand
        counts too), else the module of the current (or last) call, set before its hooks run."""
        connected = getattr(self._strategy, "lightning_module", None)
        return connected if isinstance(connected, torch.nn.Module) else self._module

    @property
    def model(self) -> torch.nn.Module | None:
        """The module as the strategy runs it (DDP's wrapper once prepared), else the module itself."""
        run, module = self._run, self.lightning_module
        if run is not None and run.module is module and run.prepared.wrapped is not None:
            return run.prepared.wrapped
        return module

    @property
    def datamodule(self) -> Any:
        return self._datamodule

    @datamodule.setter
    def datamodule(self, datamodule: Any) -> None:
        """Settable, as Lightning's plain attribute is (``lightning_getattr`` and tuners look values up in it);
        the next call's ``datamodule=`` replaces it."""
        self._datamodule = datamodule

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
        """Whether the last call raised, or a signal is stopping the fit (Lightning: ``status`` INTERRUPTED)."""
        from .state import StopReason, TrainerStatus

        return self.state.status is TrainerStatus.INTERRUPTED or self.state.stop_reason is StopReason.SIGNAL

    def _checkpoint_folders(self) -> list[Path]:
        folders = [Path(c.dirpath) for c in self.checkpoint_callbacks if c.dirpath is not None]
        folders.append(self.options.root_dir / "checkpoints")  # ModelCheckpoint's folder when there is no logger
        base = self.options.root_dir / "lightning_logs"
        if base.is_dir():
            folders += sorted(base.glob("version_*/checkpoints"))
        if self._log_dir is not None:
            folders.append(self._log_dir / "checkpoints")
        return list(dict.fromkeys(folders))

    def _model_or_last(self, model: torch.nn.Module | None, method: str) -> torch.nn.Module:
        """``model``, else the module of the last call: its run's, or (after a call whose work ran in spawned
        processes, which leaves no run here) the module connected to the Trainer, as Lightning falls back to
        ``trainer.lightning_module``."""
        if model is not None:
            return model
        if self._run is not None:
            return self._run.module
        if self.lightning_module is not None:
            return self.lightning_module
        from .options.arguments import NotALightningModule

        raise NotALightningModule(
            f"`Trainer.{method}()` requires a `LightningModule` when it hasn't been passed in a previous run: this "
            f"Trainer has not fitted one; pass the model, e.g. trainer.{method}(model, dataloaders)."
        )

    # ---- the options, as Lightning's Trainer attributes ----------------------------------------------------
    @property
    def min_epochs(self) -> int | None:
        """The fit loop's (Lightning's): as given; unset, None until a fit starts, then 0 (1 with ``min_steps``)."""
        return self.fit_loop.min_epochs

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
        """As given: ``True`` stays ``True`` (one batch), and so does ``1``, as Lightning reads it; another int is the
        number of batches."""
        given = self._given.get("fast_dev_run", False)
        if given == 1 and type(given) is int:
            return True
        return given if isinstance(given, (bool, int)) else bool(self.options.fast_dev_run)

    @property
    def log_every_n_steps(self) -> int:
        """Every how many batches the step values are logged; 0 under ``barebones=True``, which logs nothing (as
        Lightning reports it: callbacks that follow the cadence, such as ``LearningRateMonitor``, stay quiet)."""
        return 0 if self.options.barebones else self.options.log_every_n_steps

    @property
    def num_sanity_val_steps(self) -> float | int:
        steps = self.options.num_sanity_val_steps
        return math.inf if steps == -1 else steps

    @property
    def val_check_interval(self) -> float | int | datetime.timedelta:
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

    # ---- the loaders and their batch counts ----------------------------------------------------------------
    def _loaders(self, key: str) -> list[Any] | None:
        found = self.state.data.get(key)
        return None if found is None else list(found[0] if isinstance(found[0], list) else [found[0]])

    def _counts(self, key: str) -> list[float]:
        found = self.state.data.get(key)
        return [] if found is None else list(found[1] if isinstance(found[1], list) else [found[1]])

    @property
    def train_dataloader(self) -> Any:
        """The loader the last ``fit`` trained on (None before one); loaders given together in a list or dict (or a
        ``CombinedLoader``) come back in that nesting, as Lightning's ``CombinedLoader.iterables``."""
        found = self.state.data.get("train")
        return None if found is None else found[0]

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
        return [min(self.num_sanity_val_steps, count) for count in self._counts("fit:val")]  # the fit's validation

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
        from .loops._limits import parsed_max_epochs

        max_steps = options.max_steps if options.max_steps is not None else -1
        timed = options.max_time is not None or any(
            is_instance_if_loaded(c, "accelplug.callbacks.timer", "Timer") for c in self.callbacks
        )
        max_epochs = parsed_max_epochs(options.max_epochs, max_steps, timed=timed)
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

    # ---- the rest ------------------------------------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        """A pickled Trainer (``torch.save(trainer)``, as Lightning allows) keeps its options, counters, callbacks,
        loggers and model; the last call's live objects (hook caches, the lazy training-loader maker, the signal
        guard) stay behind: they hold closures, and a call makes them anew."""
        kept = dict(self.__dict__)
        kept["_run"] = kept["_signals"] = None
        kept["state"] = dataclasses.replace(self.state, train_source=None)
        return kept

    @property
    def ckpt_path(self) -> str | None:
        """The checkpoint the last call restored (set it to have the next call restore that one)."""
        return self.state.ckpt_path

    @ckpt_path.setter
    def ckpt_path(self, path: Any) -> None:
        """Restored by every later call until set back to None (a call's own ``ckpt_path`` wins, and clears it)."""
        self.state.ckpt_path = None if path is None else str(path)
        self.state.ckpt_path_set = bool(path)

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

        return self.state.stage in (RunningStage.VALIDATING, Stage.TESTING, Stage.SANITY_CHECKING)

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
        from ..strategies.fsdp import FSDPStrategy
        from ..strategies.init_contexts import module_init_context

        sharded = isinstance(self._strategy, FSDPStrategy)
        device = self.selection.root_device
        with module_init_context(device, self._precision, sharded=sharded, empty_init=empty_init):
            yield

    def _tuning(self) -> Any:
        """The tuner's trial fits, for ``LearningRateFinder``/``BatchSizeFinder``: they sit below the Trainer, so
        they reach it through their ``trainer`` argument rather than an import."""
        from . import _tuning

        return _tuning

    # ---- the loop objects (Lightning's ``fit_loop``...) and what they decide -------------------------------
    def _view(self, name: str, make: Callable[[Host], _V]) -> _V:
        """One view of each kind per Trainer, so ``trainer.fit_loop is trainer.fit_loop`` as in Lightning."""
        views: dict[str, Any] = self.__dict__.setdefault("_loop_views", {})
        if name not in views:
            views[name] = make(self)  # type: ignore[arg-type]  # the Trainer is the Host
        view: _V = views[name]
        return view

    @property
    def fit_loop(self) -> FitLoopView:
        from .loops._views import FitLoopView

        return self._view("fit", FitLoopView)

    @property
    def validate_loop(self) -> EvaluationLoopView:
        from .loops._views import EvaluationLoopView

        return self._view("validate", lambda host: EvaluationLoopView(host, "validate:validation"))

    @property
    def test_loop(self) -> EvaluationLoopView:
        from .loops._views import EvaluationLoopView

        return self._view("test", lambda host: EvaluationLoopView(host, "test:test"))

    @property
    def predict_loop(self) -> PredictionLoopView:
        from .loops._views import PredictionLoopView

        return self._view("predict", PredictionLoopView)

    @property
    def val_check_batch(self) -> int | float | None:
        """After a fit set up its data: validation runs every this many training batches (None before a fit)."""
        counts = self.state.data.get("train")
        if counts is None:
            return None
        length, interval = counts[1], self.options.val_check_interval
        length = length[0] if isinstance(length, list) else length
        if isinstance(interval, datetime.timedelta):
            return None  # time-based: no batch schedule, as in Lightning
        if isinstance(interval, int):
            return interval
        if length is None or length == float("inf"):
            return float("inf")
        return max(1, int(length * float(interval if interval is not None else 1.0)))

    @property
    def enable_validation(self) -> bool:
        """Whether a fit validates: the module writes ``validation_step``, there is validation data, and
        ``limit_val_batches`` is not 0."""
        from ..data.sources import has_loader_source

        module = getattr(self, "lightning_module", None)
        if module is None or not overrides(module, "validation_step") or self.options.limit_val_batches == 0:
            return False
        return "val" in self.state.data or has_loader_source("validate", module, getattr(self, "datamodule", None))

    @property
    def progress_bar_callback(self) -> Any:
        """The progress-bar callback among the Trainer's callbacks; without one, a :class:`DisplayProgressBar`
        reading the totals and metrics of accelplug's own display (Lightning's default bar is a callback);
        None with ``enable_progress_bar=False``."""
        found = progress_bar_callback(self.callbacks)
        if found is not None or self.options.enable_progress_bar is False:
            return found
        if self._display_bar is None:
            self._display_bar = DisplayProgressBar(self)
        return self._display_bar

    @property
    def distributed_sampler_kwargs(self) -> dict[str, int] | None:
        """``num_replicas``/``rank`` for a ``DistributedSampler`` under a parallel strategy, else None."""
        kwargs: dict[str, int] | None = getattr(getattr(self, "strategy", None), "distributed_sampler_kwargs", None)
        return kwargs
