"""One fit/validate/test/predict call's moving parts: set up in Lightning's order, torn down in ``finally``.

:func:`start_run` brings up the strategy's process environment, gathers the callbacks (the Trainer's
and the module's ``configure_callbacks()``), runs ``prepare_data`` on local rank 0, the ``setup(stage)``
hooks and ``configure_model``, and prepares the module through the strategy's preparation order.
:func:`end_run` runs the ``teardown(stage)`` hooks, the strategy's teardown (and with it the
accelerator's) and closes the loggers. The loops receive the :class:`Run` and never touch the
Trainer's private state; callbacks still receive the Trainer object, as their hooks promise.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from ..checkpoint import AsyncCheckpointIO
from ..data.batches import make_transfer
from ..data.workers import release_iterators, shutdown_workers
from ..errors import MisconfigurationException
from ..loggers import CSVLogger, TensorBoardLogger
from ..loggers.protocol import finalize_loggers, start_experiments
from ..overrides import overrides, writes_own
from ..profilers import PassThroughProfiler, Profiler
from ..strategies.preparation import prepare_module, setup_environment
from ._run import Run
from .dispatch.hooks import HookDispatcher
from .dispatch.profiling import (
    TIMED_DATAMODULE_METHODS,
    TIMED_MODULE_METHODS,
    ProfiledHookDispatcher,
    time_methods,
    untime_methods,
)
from .display.defaults import add_module_callbacks
from .logging.self_log import LogRouter
from .options.precision_and_sync import connect_precision, plugin_transfer
from .state import LoopState, RunningStage, Stage, TrainerFn

if TYPE_CHECKING:
    from ..precision.base import NumericPrecision
    from ..strategies.base import Strategy

__all__ = ["end_run", "recording_profiler", "setup_profiler", "start_run"]


def _call_datamodule(datamodule: Any, name: str, *args: Any, **kwargs: Any) -> None:
    """A datamodule's hook, called whether or not it overrides it (as Lightning calls, and profiles, it); only
    ``prepare_data`` is called where it is overridden, as Lightning's."""
    method = getattr(datamodule, name, None) if datamodule is not None else None
    if callable(method) and (name != "prepare_data" or overrides(datamodule, name)):
        method(*args, **kwargs)


def _drop_unpicklable_hparams(module: torch.nn.Module) -> None:
    """What ``pickle`` cannot write leaves ``hparams`` with a warning, as Lightning does at each call's start:
    checkpoints and spawned processes would fail on it."""
    from collections.abc import MutableMapping

    from ..core.hparams import clean_namespace

    hparams = getattr(module, "hparams", None)
    if isinstance(hparams, MutableMapping) and hparams:
        clean_namespace(hparams)


def _enter_stage(state: LoopState, stage: Stage) -> None:
    """Lightning's ``trainer.state.fn`` (the method called) and ``stage`` (what runs: a fit starts training)."""
    state.fn = TrainerFn(stage.value)
    state.stage = RunningStage.TRAINING if stage is Stage.FITTING else RunningStage(stage.value)


def start_run(
    trainer: Any,
    module: torch.nn.Module,
    stage: Stage,
    *,
    datamodule: Any = None,
    with_optimizers: bool,
    compile_options: dict[str, Any] | None = None,
    chatty: bool = False,
    restore_first: Callable[[HookDispatcher], None] | None = None,
) -> Run:
    """Set up one call in Lightning's order, up to (not including) ``on_fit_start``.

    The preparation itself is :mod:`accelplug.strategies.preparation`'s two steps, the path a custom loop shares;
    what is the Trainer's own here is the callbacks and the hooks Lightning runs between them.
    ``restore_first`` runs after ``configure_model`` and before the preparation (``configure_optimizers()``
    included): where Lightning puts a checkpoint's module, datamodule and callbacks back.
    """
    strategy: Strategy = trainer.strategy
    device: torch.device = trainer.root_device
    setup_environment(strategy, trainer.accelerator, device)
    trainer.accelerator.setup(trainer)  # Lightning's per-call hook, after the device is set up
    state: LoopState = trainer.state
    _enter_stage(state, stage)
    _watch_background_saves(strategy, state)
    callbacks = list(trainer.callbacks)
    profiler = recording_profiler(trainer)
    timed = [] if profiler is None else _time_methods(profiler, module, datamodule)
    _attach(module, trainer, datamodule)  # configure_callbacks already sees its trainer, as in Lightning
    extra = _module_callbacks(module)
    if extra:
        callbacks = trainer.callbacks = add_module_callbacks(callbacks, extra)
    router = _lend_log(trainer, callbacks, module, stage)
    hooks = _dispatcher(trainer, module, callbacks, router, datamodule, profiler, timed)
    strategy.attach_module(module)
    if strategy.local_rank == 0:
        _call_datamodule(datamodule, "prepare_data")
        hooks.call_module("prepare_data")
    strategy.barrier()
    start_experiments(trainer.loggers)
    _call_datamodule(datamodule, "setup", stage=TrainerFn(stage.value))  # by keyword, Lightning's enum (a str)
    hooks.call_stage("setup", TrainerFn(stage.value))
    _configure_model(hooks, strategy, trainer.precision_plugin, module)
    if restore_first is not None:
        _restore_first(restore_first, hooks, trainer, datamodule, stage, timed)
    state.clear_metrics()
    precision = trainer.precision_plugin
    getattr(precision, "numerics", precision).cache_casts = False  # Lightning's Trainer: no weight-cast cache
    layer_sync = trainer._layer_sync
    prepared = prepare_module(
        strategy,
        module,
        precision,
        with_optimizers=with_optimizers,
        compile_options=compile_options,
        layer_sync=layer_sync.apply if layer_sync is not None else None,
    )
    connect_precision(precision, prepared)
    module = prepared.module
    return Run(
        trainer=trainer,
        module=module,
        stage=stage,
        strategy=strategy,
        precision=precision,
        device=device,
        state=state,
        options=trainer.options,
        hooks=hooks,
        router=router,
        prepared=prepared,
        transfer=plugin_transfer(precision, make_transfer(device, precision.param_dtype)),
        chatty=chatty,
        datamodule=datamodule,
    )


def _restore_first(
    restore: Callable[[HookDispatcher], None],
    hooks: HookDispatcher,
    trainer: Any,
    datamodule: Any,
    stage: Stage,
    timed: list[tuple[Any, str, Any]],
) -> None:
    """The checkpoint's first half; a failure there (a missing file, one that does not fit the model) ends the call
    as a failure does once it runs: ``on_exception``, the teardown hooks, the strategy's teardown."""
    try:
        restore(hooks)
    except BaseException as exc:
        state = trainer.state
        _tear_down(hooks, trainer.strategy, trainer.precision_plugin, datamodule, stage, state, [], exc)
        untime_methods(timed)
        raise


def _dispatcher(
    trainer: Any,
    module: torch.nn.Module,
    callbacks: list[Any],
    router: LogRouter,
    datamodule: Any,
    profiler: Profiler | None,
    timed: list[tuple[Any, str, Any]],
) -> HookDispatcher:
    """The run's hook dispatcher: the plain one, or the one that times every hook when a profiler records."""
    if profiler is None:
        return HookDispatcher(trainer, module, callbacks, on_enter=_enter(router), datamodule=datamodule)
    hooks = ProfiledHookDispatcher(
        trainer, module, callbacks, profiler=profiler, on_enter=_enter(router), datamodule=datamodule
    )
    hooks.timed_methods = timed
    return hooks


def _configure_model(hooks: HookDispatcher, strategy: Strategy, precision: NumericPrecision, module: Any) -> None:
    """The legacy ``configure_sharded_model`` where a module writes it, then ``configure_model`` in Lightning's
    contexts."""
    _configure_sharded_model(module)
    with _configure_model_context(strategy, precision, module):
        hooks.call_module("configure_model")


def _configure_model_context(
    strategy: Strategy, precision: NumericPrecision, module: torch.nn.Module
) -> contextlib.AbstractContextManager[Any]:
    """Where Lightning builds what ``configure_model`` creates: on the strategy's device, sharded where it shards,
    in the precision's dtype (entered only for a module that writes the hook, as Lightning does)."""
    stack = contextlib.ExitStack()
    if writes_own(module, "configure_model"):
        stack.enter_context(strategy.tensor_init_context())
        stack.enter_context(strategy.model_sharded_context())
        module_init = getattr(precision, "module_init_context", None)  # a Lightning plugin's; the dtype otherwise
        stack.enter_context(module_init() if callable(module_init) else precision.tensor_init_context())
    return stack


class _BothConfigureHooks(MisconfigurationException, RuntimeError):
    """Lightning raises a ``RuntimeError`` here; this is also accelplug's configuration error."""


def _configure_sharded_model(module: torch.nn.Module) -> None:
    """Lightning's deprecated predecessor of ``configure_model``: called where a module still writes it."""
    if not writes_own(module, "configure_sharded_model"):
        return
    name = type(module).__name__
    if writes_own(module, "configure_model"):
        raise _BothConfigureHooks(
            f"Both `{name}.configure_model`, and `{name}.configure_sharded_model` are overridden. The latter is "
            "deprecated and it should be replaced with the former."
        )
    warnings.warn(
        f"You have overridden `{name}.configure_sharded_model` which is deprecated. Please override the "
        "`configure_model` hook instead. Instantiation with the newer hook will be created on the device right "
        "away and have the right data type depending on the precision setting in the Trainer.",
        DeprecationWarning,
        stacklevel=4,
    )
    module.configure_sharded_model()  # type: ignore[operator]


def end_run(run: Run, *, failed: BaseException | None = None) -> None:
    """Teardown hooks, the strategy's (and accelerator's) teardown and the loggers, whatever happened."""
    module = getattr(run.trainer, "_module", None) or run.module
    try:
        _tear_down(run.hooks, run.strategy, run.precision, run.datamodule, run.stage, run.state, run.loggers, failed)
    finally:
        shutdown_workers(list(run.state.data.values()))  # persistent workers too, as Lightning's loop teardown
        # the last epoch's workers stop now (Lightning's teardown), after the end hooks: dropping the run's reference
        # ends them, once; after a failure, whose traceback still holds the loop's frames, they are stopped here
        if failed is not None:
            release_iterators(run.iterators)
        run.iterators.clear()
    # which attribute holds each logged Metric is found once per call: the next call's setup may add metrics
    vars(module).pop("_logged_metric_attributes", None)
    profiler = run.hooks.profiler
    if isinstance(run.hooks, ProfiledHookDispatcher):
        untime_methods(run.hooks.timed_methods)
    if profiler is not None and failed is None:  # the report once the call went through, as Lightning writes it
        profiler.describe()
    elif profiler is not None:
        profiler.teardown(run.stage.value)  # its file closed; Lightning leaves it open


def _tear_down(
    hooks: HookDispatcher,
    strategy: Strategy,
    precision: Any,
    datamodule: Any,
    stage: Stage,
    state: LoopState,
    loggers: list[Any],
    failed: BaseException | None,
) -> None:
    """What ends a call, from its pieces (a call whose setup failed has no :class:`Run` yet)."""
    if failed is not None:
        hooks.call_callbacks("on_exception", failed)
        _call_datamodule(datamodule, "on_exception", failed)
        strategy.on_exception(failed)
    try:
        hooks.call_stage("teardown", TrainerFn(stage.value))
        _call_datamodule(datamodule, "teardown", stage=TrainerFn(stage.value))
    finally:
        try:
            finalize_loggers(loggers, failed=failed)
        finally:
            strategy.teardown()
            teardown = getattr(precision, "teardown", None)  # a Lightning precision plugin's
            if callable(teardown):
                teardown()
        state.stage = None  # ``fn`` keeps the method that ran, as Lightning's does, until the next call


def recording_profiler(trainer: Any) -> Profiler | None:
    """``trainer.profiler`` unless it records nothing (a PassThroughProfiler): the run then takes its lean path."""
    profiler = getattr(trainer, "profiler", None)
    return None if profiler is None or type(profiler) is PassThroughProfiler else profiler


def _time_methods(profiler: Profiler, module: torch.nn.Module, datamodule: Any) -> list[tuple[Any, str, Any]]:
    timed = time_methods(profiler, module, "LightningModule", TIMED_MODULE_METHODS)
    if datamodule is not None:
        timed += time_methods(profiler, datamodule, "LightningDataModule", TIMED_DATAMODULE_METHODS)
    return timed


def setup_profiler(trainer: Any, run: Run) -> None:
    """Stage, rank and folder for the run's profiler, the folder being Lightning's ``trainer.log_dir``: the
    first logger's (its ``log_dir`` for CSV and TensorBoard, else its ``save_dir``), else ``default_root_dir``."""
    import weakref

    profiler = run.hooks.profiler
    if profiler is None:
        return
    loggers = list(getattr(trainer, "_loggers", []))
    if not loggers:
        folder: Any = trainer.default_root_dir
    elif isinstance(loggers[0], (CSVLogger, TensorBoardLogger)):
        folder = loggers[0].log_dir
    else:
        folder = getattr(loggers[0], "save_dir", None) or trainer.default_root_dir
    if hasattr(profiler, "_lightning_module"):  # PyTorchProfiler names the module's layers in its traces
        profiler._lightning_module = weakref.proxy(run.module)
    local_rank = trainer.local_rank if trainer.world_size > 1 else None
    profiler.setup(stage=run.stage.value, local_rank=local_rank, log_dir=None if folder is None else str(folder))


def _watch_background_saves(strategy: Strategy, state: LoopState) -> None:
    """A save failing in ``AsyncCheckpointIO``'s thread raises the loop's stop flag, and the stop check then
    raises the error: the fit ends at the next step, not at its end, and the loop pays nothing per step."""
    io = strategy.checkpoint_io
    if not isinstance(io, AsyncCheckpointIO):
        return

    def failed() -> None:
        state.raise_failed_save = io.raise_failure
        state.should_stop = True

    io._on_failure = failed


def _lend_log(trainer: Any, callbacks: list[Any], module: torch.nn.Module, stage: Stage) -> LogRouter:
    """This run's log router; every callback gets the module's ``log``/``log_dict`` (Lightning binds them at each
    run), so a callback hook can ``self.log(...)`` under the rules of the hook it runs in. Prediction collects
    nothing, and ``barebones=True`` drops every value (Lightning's rules)."""
    router = LogRouter()
    router.has_logger = bool(trainer.loggers)
    router.collecting = stage is not Stage.PREDICTING
    router.barebones = bool(trainer.options.barebones)
    router.sync_device = trainer.root_device if trainer.strategy.is_distributed else None
    log = getattr(module, "log", None)
    log_dict = getattr(module, "log_dict", None)
    for callback in callbacks:
        with contextlib.suppress(AttributeError):  # a callback with __slots__ keeps what it has
            callback.log = log if callable(log) else router.log
            callback.log_dict = log_dict if callable(log_dict) else router.log_dict
    return router


def _enter(router: LogRouter) -> Callable[[str], None]:
    def enter(fx: str) -> None:
        router.fx = fx

    return enter


def _module_callbacks(module: torch.nn.Module) -> list[Any]:
    configure = getattr(module, "configure_callbacks", None)
    if not callable(configure):
        return []
    returned = configure()
    if returned is None:
        return []
    items = list(returned) if isinstance(returned, (list, tuple)) else [returned]
    bad = [c for c in items if isinstance(c, (str, bytes, int, float)) or c is None]
    if bad:
        raise MisconfigurationException(
            f"{type(module).__name__}.configure_callbacks() returned {bad[0]!r}; expected callback objects."
        )
    return items


def _attach(module: torch.nn.Module, trainer: Any, datamodule: Any) -> None:
    from ..core.module import LightningModule

    _drop_unpicklable_hparams(module)
    if isinstance(module, LightningModule):
        module.trainer = trainer
    trainer._datamodule = datamodule  # trainer.datamodule from the call's first hooks (setup), as in Lightning
    trainer.strategy.connect(module)  # Lightning's strategy.lightning_module
    if datamodule is not None and hasattr(datamodule, "trainer"):
        try:
            datamodule.trainer = trainer
        except AttributeError:
            pass
