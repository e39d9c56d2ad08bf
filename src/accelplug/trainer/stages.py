"""What ``fit``, ``validate``, ``test`` and ``predict`` do, in order, from setup to teardown.

Each function reads like Lightning's documented pseudocode: set up the run (callbacks, prepare_data,
setup, configure_model, the strategy's preparation), restore a checkpoint if asked, run the loop, and
tear down in ``finally`` whatever happened, so an exception still runs the teardown hooks, closes the
loggers and releases the devices. ``fit`` also resumes by itself in a restarted worker (:mod:`.restarts`),
turns SIGTERM/SIGINT into a checkpoint and an exit (:mod:`.interrupts`) and, with several processes,
has a hung rank named (:meth:`~accelplug.strategies.base.Strategy.watch_for_hangs`).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from .checkpoint_state import resolve_ckpt_path, restore_checkpoint
from .environment import apply_run_settings, seed_everything
from .evaluation import EvaluationLoop, PredictionLoop
from .fit_loop import FitLoop
from .interrupts import FitInterrupted, SignalGuard, save_on_signal
from .loading import has_loader_source, prepare_all, prepare_loader, resolve_loaders
from .restarts import announce_resume, implied_ckpt_path
from .run import Run, end_run, start_run
from .self_log import attached_log
from .state import Stage, StopReason
from .summary import announce

if TYPE_CHECKING:
    from .trainer import Trainer

__all__ = ["StageCall", "run_evaluation", "run_fit", "run_prediction"]


@dataclass(frozen=True)
class StageCall:
    """What a ``fit``/``validate``/``test``/``predict`` call was given, already checked."""

    module: torch.nn.Module
    dataloaders: Any = None
    val_dataloaders: Any = None
    datamodule: Any = None
    ckpt_path: Any = None
    weights_only: bool = True
    verbose: bool = True


@contextlib.contextmanager
def _running(trainer: Trainer, module: torch.nn.Module, stage: Stage, **setup: Any) -> Iterator[Run]:
    """A run from ``start_run`` to ``end_run``, with the loggers open and ``self.log`` attached."""
    run = start_run(trainer, module, stage, **setup)
    if stage is Stage.FITTING or trainer._run is None:
        trainer._run = run
    failed: BaseException | None = None
    try:
        trainer._open_loggers(run)
        with attached_log(module, run.router):
            yield run
    except BaseException as exc:
        failed = exc
        raise
    finally:
        end_run(run, failed=failed)
        if failed is None:
            run.strategy.barrier()


def run_fit(trainer: Trainer, call: StageCall, compile_options: dict[str, Any] | None = None) -> None:
    """Fit; SIGTERM/SIGINT end it with a checkpoint, one line and ``SystemExit(143/130)`` (:mod:`.interrupts`)."""
    try:
        _fit(trainer, call, compile_options)
    except FitInterrupted as stop:
        trainer.state.stop_reason = StopReason.SIGNAL
        if trainer.is_global_zero:
            print(stop.line(), file=sys.stderr, flush=True)
        raise SystemExit(stop.exit_code) from None


def _fit(trainer: Trainer, call: StageCall, compile_options: dict[str, Any] | None) -> None:
    options = trainer.options
    module, datamodule = call.module, call.datamodule
    if options.seed is not None:
        seed_everything(options.seed, verbose=False)
    trainer.setup_notes = apply_run_settings(trainer.root_device.type, options, verbose=trainer._chatty)
    trainer.state.reset_for_fit()
    with (
        _running(
            trainer, module, Stage.FITTING, datamodule=datamodule, with_optimizers=True, compile_options=compile_options
        ) as run,
        _signal_guard(run) as signals,
    ):
        resume = None
        ckpt_path, restart = implied_ckpt_path(call.ckpt_path)
        path = resolve_ckpt_path(trainer, ckpt_path, run.strategy.checkpoint_map_location())
        if path is not None:
            resume = restore_checkpoint(run, path, weights_only=call.weights_only, training=True)
        announce_resume(trainer, ckpt_path, path, restart)
        announce(trainer, run)
        with _anomaly_detection(options.detect_anomaly):
            run.hooks.call("on_fit_start")
            progress = run.progress = trainer._make_progress()
            progress.start(None, run.state.current_epoch, options.max_epochs)
            try:
                val_loop = _validation_loop(run, call.val_dataloaders, module, datamodule)
                if val_loop is not None and options.num_sanity_val_steps and resume is None:
                    steps = options.num_sanity_val_steps
                    val_loop.sanity_check(steps if steps > 0 else sys.maxsize)
                loaders, reload, _ = resolve_loaders("fit", call.dataloaders, module, datamodule, required=True)
                train_loader = prepare_loader(run, loaders[0], shuffle=not options.overfit_batches)
                loop = FitLoop(run, train_loader, val_loop, progress, resume)
                loop.reload = reload
                progress.set_limits(loop.limits.total_steps, loop.limits.max_epochs)
                trainer._optimization = loop.opt
                with run.strategy.watch_for_hangs(lambda: run.state.global_step):
                    loop.run()
            finally:
                progress.stop()
                trainer._optimization = None
            stopping = signals.settle(run)
            if stopping is not None:
                raise save_on_signal(trainer, stopping)
            run.hooks.call("on_fit_end")


@contextlib.contextmanager
def _signal_guard(run: Run) -> Iterator[SignalGuard]:
    """SIGTERM/SIGINT handlers for the fit (main thread only), the previous ones put back afterwards."""
    from ..strategies.ddp import launched_by_torchrun

    distributed = run.strategy.is_distributed and run.strategy.world_size > 1
    with SignalGuard(run.state, distributed=distributed, repeat_aborts=not launched_by_torchrun()) as guard:
        run.signals = guard
        try:
            yield guard
        finally:
            run.signals = None


def _validation_loop(run: Run, given: Any, module: torch.nn.Module, datamodule: Any) -> EvaluationLoop | None:
    if not callable(getattr(module, "validation_step", None)) or run.options.limit_val_batches == 0:
        return None
    if given is None and not has_loader_source("validate", module, datamodule):
        return None

    def loaders() -> list[Any]:
        found, _, _ = resolve_loaders("validate", given, module, datamodule, required=False)
        return prepare_all(run, found)

    return EvaluationLoop(run, loaders, Stage.VALIDATING, limit=run.options.limit_val_batches)


def run_evaluation(trainer: Trainer, stage: Stage, call: StageCall) -> list[dict[str, float]]:
    module, datamodule = call.module, call.datamodule
    name = "test" if stage is Stage.TESTING else "validate"
    limit = trainer.options.limit_test_batches if stage is Stage.TESTING else trainer.options.limit_val_batches
    with _running(trainer, module, stage, datamodule=datamodule, with_optimizers=False) as run:
        path = resolve_ckpt_path(trainer, call.ckpt_path, run.strategy.checkpoint_map_location())
        if path is not None:
            restore_checkpoint(run, path, weights_only=call.weights_only, training=False)
        loaders, _, _ = resolve_loaders(name, call.dataloaders, module, datamodule, required=True)
        run.progress = trainer._make_progress()
        loop = EvaluationLoop(run, prepare_all(run, loaders), stage, limit=limit)
        metrics = loop.evaluate(publish=True)
    results = _split_by_loader(metrics, len(loaders))
    if call.verbose and trainer.is_global_zero:
        from .summary import print_results

        print_results(name, results)
    return results


def run_prediction(trainer: Trainer, call: StageCall) -> Any:
    module, datamodule = call.module, call.datamodule
    with _running(trainer, module, Stage.PREDICTING, datamodule=datamodule, with_optimizers=False) as run:
        path = resolve_ckpt_path(trainer, call.ckpt_path, run.strategy.checkpoint_map_location())
        if path is not None:
            restore_checkpoint(run, path, weights_only=call.weights_only, training=False)
        loaders, _, _ = resolve_loaders("predict", call.dataloaders, module, datamodule, required=True)
        loop = PredictionLoop(
            run, prepare_all(run, loaders, shuffle=False), limit=trainer.options.limit_predict_batches
        )
        return loop.predict()


def _split_by_loader(metrics: dict[str, float], count: int) -> list[dict[str, float]]:
    if count <= 1:
        return [metrics]
    results: list[dict[str, float]] = [{} for _ in range(count)]
    for key, value in metrics.items():
        name, _, index = key.rpartition("/dataloader_idx_")
        if name and index.isdigit() and int(index) < count:
            results[int(index)][key] = value
        else:
            for result in results:
                result[key] = value
    return results


@contextlib.contextmanager
def _anomaly_detection(enabled: bool) -> Iterator[None]:
    if not enabled:
        yield
        return
    with torch.autograd.detect_anomaly():  # type: ignore[no-untyped-call]
        yield
