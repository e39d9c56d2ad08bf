"""What ``fit``, ``validate``, ``test`` and ``predict`` do, in order, from setup to teardown.

Each function reads like Lightning's documented pseudocode: set up the run (callbacks, prepare_data,
setup, configure_model, the strategy's preparation), restore a checkpoint if asked, run the loop, and
tear down in ``finally`` whatever happened, so an exception still runs the teardown hooks, closes the
loggers and releases the devices. ``fit`` also resumes by itself in a restarted worker
(:mod:`.checkpointing.auto_resume`), turns SIGTERM/SIGINT into a checkpoint and an exit
(:mod:`.process.interrupts`) and, with several processes, has a hung rank named
(:meth:`~accelplug.strategies.base.Strategy.watch_for_hangs`).

The Trainer is typed here as :class:`StageHost`, the part of it the stages use, so this module never
imports ``trainer.py`` (which imports this one).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import torch

from ..data.loaders import warn_padded_evaluation
from ..data.sources import resolve_loaders
from ..distributed.rank_zero import is_rank_zero
from ..errors import TunerExit
from ..loggers import CSVLogger, TensorBoardLogger
from ..loggers.csv_logs import ExperimentWriter
from ..loggers.protocol import log_run_start
from ._run import Run
from ._setup import end_run, setup_profiler, start_run
from .checkpointing.auto_resume import Asked, Choice, choose_checkpoint
from .checkpointing.contents import Restoring, read_for_restore, restore_modules, restore_training_state
from .display.defaults import progress_bar_callback
from .display.progress import make_progress
from .display.summary import announce, print_results
from .logging.self_log import attached_log
from .loops._fit_data import train_loader_source, validation_loop
from .loops._readback import reduce_to_floats
from .loops._resume import sanity_check_on_resume
from .loops.evaluation import EvaluationLoop, grad_context, split_by_loader
from .loops.fit import FitLoop
from .loops.prediction import PredictionLoop
from .process.environment import apply_run_settings, seed_everything
from .process.interrupts import FitInterrupted, SignalGuard, save_on_signal
from .process.requeue import requeue_signal
from .state import LoopState, Stage, StopReason, TrainerStatus

if TYPE_CHECKING:
    from ..strategies.base import Strategy
    from .dispatch.hooks import HookDispatcher
    from .loops._limits import Limits
    from .options.entries import TrainerOptions

__all__ = ["StageCall", "StageHost", "run_evaluation", "run_fit", "run_prediction"]

#: Loggers whose version folder is picked by looking at the disk: rank 0 picks, the other ranks follow.
_FILE_LOGGERS = (CSVLogger, TensorBoardLogger)


class StageHost(Protocol):
    """The part of the Trainer the stages read and keep up to date (the Trainer is the one host)."""

    options: TrainerOptions
    state: LoopState
    callbacks: list[Any]
    setup_notes: list[str]
    _run: Run | None
    _stage_run: Run | None
    _module: torch.nn.Module | None
    _signals: SignalGuard | None
    _log_dir: Path | None
    _loggers: list[Any]

    @property
    def strategy(self) -> Strategy: ...

    @property
    def root_device(self) -> torch.device: ...

    @property
    def is_global_zero(self) -> bool: ...

    @property
    def log_dir(self) -> str: ...

    @property
    def checkpoint_callback(self) -> Any: ...

    @property
    def checkpoint_callbacks(self) -> list[Any]: ...

    @property
    def default_root_dir(self) -> str: ...

    @property
    def global_step(self) -> int: ...

    @property
    def fast_dev_run(self) -> bool | int: ...

    def _checkpoint_folders(self) -> list[Path]: ...


@dataclass(frozen=True)
class StageCall:
    """What a ``fit``/``validate``/``test``/``predict`` call was given, already checked."""

    module: torch.nn.Module
    dataloaders: Any = None
    val_dataloaders: Any = None
    datamodule: Any = None
    ckpt_path: Any = None
    #: as given: a user's ``CheckpointIO`` receives it unchanged (Lightning's call), accelplug's reader resolves None
    weights_only: bool | None = None
    verbose: bool = True
    #: ``torch.compile`` keyword arguments for ``fit`` (None: no compiling).
    compile: dict[str, Any] | None = None
    #: whether the call was given a model (validate/test/predict without one restore the best checkpoint)
    model_given: bool = True


def _chatty(trainer: StageHost) -> bool:
    """Whether this process prints progress and notes (global zero, progress bar on)."""
    return trainer.options.enable_progress_bar and trainer.is_global_zero


def _open_loggers(trainer: StageHost, run: Run) -> None:
    """The run folder and the file loggers' versions agreed by every rank (rank 0's).

    Every rank calls its loggers, as Lightning does (``log_metrics``, ``save``, ``log_hyperparams``,
    ``log_graph``, ``finalize``): whether a call does anything off rank 0 is the logger's choice (the built-in
    ones are ``rank_zero_only``; a custom logger may record every rank). Only rank 0 reads the CSV file back."""
    file_loggers = [lg for lg in trainer._loggers if isinstance(lg, _FILE_LOGGERS)]
    if file_loggers:
        # Every rank takes part, whatever it knows already: a rank whose versions were fixed earlier (a callback
        # read ``log_dir``) skipping this broadcast would pair its next one with the others' and receive the wrong
        # object. Only rank 0 chooses, so the others never scan the folder.
        mine = [lg.version for lg in file_loggers] if trainer.is_global_zero else None
        chosen = run.strategy.broadcast_object(mine)
        for logger, version in zip(file_loggers, chosen, strict=True):
            logger._version = version
    trainer._log_dir = Path(run.strategy.broadcast_object(trainer.log_dir))
    run.loggers = list(trainer._loggers)
    csv_logger = next((lg for lg in run.loggers if isinstance(lg, CSVLogger)), None) if trainer.is_global_zero else None
    run.csv_path = Path(csv_logger.log_dir) / ExperimentWriter.NAME_METRICS_FILE if csv_logger is not None else None


class _Restore:
    """The checkpoint a call restores, in Lightning's order: chosen (:mod:`.checkpointing.auto_resume`, the one
    resolver) and its module, datamodule and callbacks put back while the call is set up, before
    ``configure_optimizers()`` (``start_run`` calls this object there); the optimizers, schedulers and loop once the
    strategy prepared the module (:meth:`finish`, after ``on_fit_start``)."""

    def __init__(self, trainer: StageHost, fn: str, call: StageCall, environment: Any = None) -> None:
        self.trainer, self.call, self.training = trainer, call, fn == "fit"
        self.asked = Asked(fn, call.ckpt_path, call.model_given, environment)
        self.choice: Choice | None = None
        self.restoring: Restoring | None = None

    def __call__(self, hooks: HookDispatcher) -> None:
        strategy = self.trainer.strategy
        self.choice = choose_checkpoint(self.trainer, strategy, self.asked)
        if self.choice.path is None:
            return
        _info(f"Restoring states from the checkpoint path at {self.choice.path}")
        self.restoring = read_for_restore(
            strategy, self.choice.path, weights_only=self.call.weights_only, given=self.choice.as_given
        )
        restore_modules(hooks, strategy, self.call.module, self.call.datamodule, self.restoring)

    def finish(self, run: Run) -> dict[str, Any] | None:
        """The rest of the checkpoint (all of it where the strategy restores after its setup); None without one."""
        if self.restoring is None:
            return None
        checkpoint = restore_training_state(run, self.restoring, training=self.training)
        done = "Restored all states" if self.training else "Loaded model weights"
        _info(f"{done} from the checkpoint at {self.restoring.path}")
        return checkpoint


def _announce_stop(reason: StopReason, limits: Limits) -> None:
    """Lightning's line for why a fit ended: INFO for a limit reached or no batches; DEBUG for a stop request.
    (A time limit's line is the ``Timer``'s; a signal's, the interrupt handling's.)"""
    if reason in (StopReason.MAX_STEPS, StopReason.FAST_DEV_RUN) and limits.max_steps is not None:
        _info(f"`Trainer.fit` stopped: `max_steps={limits.max_steps!r}` reached.")
    elif reason in (StopReason.MAX_EPOCHS, StopReason.FAST_DEV_RUN):
        _info(f"`Trainer.fit` stopped: `max_epochs={limits.max_epochs!r}` reached.")
    elif reason is StopReason.NO_TRAINING_BATCHES:
        _info("`Trainer.fit` stopped: No training batches.")
    elif reason is StopReason.REQUESTED and is_rank_zero():
        logging.getLogger("accelplug.trainer").debug("`Trainer.fit` stopped: `trainer.should_stop` was set.")


def _info(line: str) -> None:
    """Lightning's INFO line on global rank zero, on the ``accelplug.trainer`` logger (``accelplug._console``)."""
    if is_rank_zero():
        logging.getLogger("accelplug.trainer").info(line)


@contextlib.contextmanager
def _running(trainer: StageHost, module: torch.nn.Module, stage: Stage, **setup: Any) -> Iterator[Run]:
    """A run from ``start_run`` to ``end_run``, with the loggers open and ``self.log`` attached."""
    trainer._module = module  # trainer.lightning_module/model from the start (configure_optimizers reads them)
    run = start_run(trainer, module, stage, chatty=_chatty(trainer), **setup)
    if stage is Stage.FITTING or trainer._run is None:
        trainer._run = run
    trainer._stage_run = run  # the call running now, whichever it is (the tuner's callbacks work on it)
    failed: BaseException | None = None
    trainer.state.status = TrainerStatus.RUNNING
    try:
        _open_loggers(trainer, run)
        setup_profiler(trainer, run)
        with attached_log(module, run.router):
            yield run
    except TunerExit:
        pass  # a tuner callback ended the call on purpose: torn down as a finished one (Lightning's way)
    except BaseException as exc:
        failed = exc
        if not _ctrl_c(exc):
            raise
        if trainer.is_global_zero:
            print("\nDetected KeyboardInterrupt, attempting graceful shutdown ...", file=sys.stderr, flush=True)
    finally:
        trainer.state.status = TrainerStatus.INTERRUPTED if failed is not None else TrainerStatus.FINISHED
        trainer._stage_run = None
        with _sigint_ignored(_ctrl_c(failed)):
            end_run(run, failed=failed)
        if failed is None:
            run.strategy.barrier()
    if _ctrl_c(failed):
        # Lightning's exit for Ctrl-C (or a KeyboardInterrupt a callback raised): torn down, then status 1.
        raise SystemExit(1)


def _ctrl_c(exc: BaseException | None) -> bool:
    """A KeyboardInterrupt of the user's (Ctrl-C, or raised by their code), not the fit's own signal stop."""
    return isinstance(exc, KeyboardInterrupt) and not isinstance(exc, FitInterrupted)


@contextlib.contextmanager
def _sigint_ignored(ignore: bool) -> Iterator[None]:
    """While a Ctrl-C'd call tears down, a second Ctrl-C does not cut the teardown short (main thread only);
    the previous handler comes back afterwards."""
    if not ignore or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)


def run_fit(trainer: StageHost, call: StageCall) -> None:
    """Fit; SIGTERM/SIGINT end it with a checkpoint, one line and ``SystemExit(143/130)``."""
    try:
        _fit(trainer, call)
    except FitInterrupted as stop:
        trainer.state.stop_reason = StopReason.SIGNAL
        if trainer.is_global_zero:
            print(stop.line(), file=sys.stderr, flush=True)
        raise SystemExit(stop.exit_code) from None


def _fit(trainer: StageHost, call: StageCall) -> None:
    options = trainer.options
    module, datamodule = call.module, call.datamodule
    if options.seed is not None:
        seed_everything(options.seed, verbose=False)
    trainer.setup_notes = apply_run_settings(trainer.root_device.type, options, verbose=_chatty(trainer))
    trainer.state.start_fit()
    trainer.state.data.clear()
    trainer.state.train_source = train_loader_source(trainer, call.dataloaders, module, datamodule)
    trainer.state.fit_given = (call.dataloaders, call.val_dataloaders)
    environment = getattr(trainer, "_cluster_environment", None)
    restore = _Restore(trainer, "fit", call, environment)
    fitting = {"datamodule": datamodule, "with_optimizers": True, "compile_options": call.compile}
    with (
        _running(trainer, module, Stage.FITTING, restore_first=restore, **fitting) as run,
        _signal_guard(run, environment) as signals,
    ):
        trainer._signals = signals
        announce(trainer, run)
        with _anomaly_detection(options.detect_anomaly):
            run.hooks.call("on_fit_start")  # Lightning's place: after configure_optimizers, before the training state
            resume = restore.finish(run)
            assert restore.choice is not None
            restore.choice.announce(trainer)
            _log_run_start(run, module, datamodule)
            module.zero_grad()  # Lightning frees whatever gradients the module holds as each stage starts
            progress = make_progress(run.chatty and progress_bar_callback(trainer.callbacks) is None)
            progress.start(None, run.state.current_epoch, options.max_epochs)
            try:
                val_loop = validation_loop(run, call.val_dataloaders, module, datamodule, progress)
                if (
                    val_loop is not None
                    and options.num_sanity_val_steps
                    and sanity_check_on_resume(resume, options.max_steps)
                ):
                    steps = options.num_sanity_val_steps
                    val_loop.sanity_check(steps if steps > 0 else sys.maxsize)
                train_loader, reload = trainer.state.train_source()  # a batch-size finder may have remade it
                loop = FitLoop(run, train_loader, val_loop, progress, resume, signals=signals)
                loop.reload = reload
                progress.set_limits(loop.limits.total_steps, loop.limits.max_epochs)
                with _optimizing(module, loop), run.strategy.watch_for_hangs(lambda: run.state.global_step):
                    _announce_stop(loop.run(), loop.limits)
            finally:
                progress.stop()
            stopping = signals.settle(lambda flags: reduce_to_floats(run, flags))
            if stopping is not None:
                raise save_on_signal(trainer, stopping)
            run.hooks.call("on_fit_end")


def _optimizing(module: torch.nn.Module, loop: FitLoop) -> contextlib.ExitStack:
    """While the loop trains (and after it, as in Lightning), a LightningModule's ``optimizers()``/``manual_backward``
    reach the loop's optimisation."""
    from ..core.module import LightningModule

    stack = contextlib.ExitStack()
    if isinstance(module, LightningModule):
        stack.enter_context(module._optimizing_with(loop.opt, keep=True))  # optimizers() after the fit too
    if loop.opt.plugin_steps is not None:  # a precision plugin that drives the step reaches the loop meanwhile
        stack.enter_context(loop.opt.plugin_steps.lent())
    return stack


@contextlib.contextmanager
def _signal_guard(run: Run, environment: Any) -> Iterator[SignalGuard]:
    """SIGTERM/SIGINT (and Slurm's requeue signal) handlers for the fit (main thread only), the previous ones
    put back afterwards."""
    from ..strategies.ddp import launched_by_torchrun

    distributed, requeue = run.strategy.is_distributed and run.strategy.world_size > 1, requeue_signal(environment)
    with SignalGuard(
        run.state, distributed=distributed, repeat_aborts=not launched_by_torchrun(), requeue=requeue
    ) as guard:
        yield guard


def run_evaluation(trainer: StageHost, stage: Stage, call: StageCall) -> list[dict[str, float]]:
    module, datamodule = call.module, call.datamodule
    name = "test" if stage is Stage.TESTING else "validate"
    limit = trainer.options.limit_test_batches if stage is Stage.TESTING else trainer.options.limit_val_batches
    results: list[dict[str, float]] = []  # stays empty when the tuner's callback ended the call early
    trainer.state.eval_given = call.dataloaders
    restore = _Restore(trainer, name, call)
    with _running(trainer, module, stage, datamodule=datamodule, with_optimizers=False, restore_first=restore) as run:
        restore.finish(run)
        _log_run_start(run, module, datamodule)
        module.zero_grad()
        if limit == 0:  # Lightning skips the whole evaluation: no loader asked for, no hook, no result
            return []
        with grad_context(run):  # Lightning asks for the loaders inside its evaluation loop, under inference_mode
            loaders, _, _ = resolve_loaders(name, call.dataloaders, module, datamodule, required=True)
        progress = make_progress(run.chatty and progress_bar_callback(trainer.callbacks) is None)
        prepared = run.prepare_loaders(loaders, "test" if stage is Stage.TESTING else "val")
        warn_padded_evaluation(loaders, prepared, name)
        loop = EvaluationLoop(run, prepared, stage, limit=limit, progress=progress)
        metrics = loop.evaluate(publish=True)
        if metrics is None:
            return []
        results = split_by_loader(metrics, len(loaders), loop.owners)
        # the table before the teardown hooks, as Lightning prints it: a rich bar still live (it stops at teardown)
        # draws its last frame below the table
        if call.verbose and trainer.is_global_zero:
            print_results(name, results)
    return results


def run_prediction(trainer: StageHost, call: StageCall) -> Any:
    module, datamodule = call.module, call.datamodule
    trainer.state.eval_given = call.dataloaders
    restore = _Restore(trainer, "predict", call)
    predicting = {"datamodule": datamodule, "with_optimizers": False, "restore_first": restore}
    with _running(trainer, module, Stage.PREDICTING, **predicting) as run:
        restore.finish(run)
        _log_run_start(run, module, datamodule)
        module.zero_grad()
        limit = trainer.options.limit_predict_batches
        if limit == 0:  # as Lightning: nothing asked for, nothing run
            return None
        with grad_context(run):
            loaders, _, _ = resolve_loaders("predict", call.dataloaders, module, datamodule, required=True)
        return PredictionLoop(run, run.prepare_loaders(loaders, "predict"), limit=limit).predict()


def _log_run_start(run: Run, module: torch.nn.Module, datamodule: Any) -> None:
    """Hyper-parameters, graph and a save to the loggers, as Lightning does at each stage's start."""
    if run.options.enable_autolog_hparams:
        log_run_start(run.loggers, module, datamodule)


@contextlib.contextmanager
def _anomaly_detection(enabled: bool) -> Iterator[None]:
    if not enabled:
        yield
        return
    with torch.autograd.detect_anomaly():  # type: ignore[no-untyped-call]
        yield
