"""The tuner's trial fits: a few steps of the running call with other callbacks and limits, then everything put back.

``Tuner.lr_find`` and ``Tuner.scale_batch_size`` (and the ``LearningRateFinder``/``BatchSizeFinder``
callbacks they add) run from a hook of a real call (``on_fit_start``, or any later training hook), as in
Lightning: the call's run is already set up, so a trial is the same fit loop built again on that run with
the tuner's callback as its only callback, no loggers, a hidden progress display and its own step limit.
Before the first trial the run's state is written to a temporary checkpoint in ``default_root_dir`` (as
Lightning does) and the loop counters are kept; afterwards the weights, optimizer and scheduler states and
counters are put back, so the fit that follows starts where it would have started without the tuner.

The callbacks sit below the Trainer and reach this module through ``trainer._tuning()``; the searches
themselves (schedules, smoothing, doubling, bisecting) are :mod:`accelplug.tuner`'s.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import torch

from ..core.module import LightningModule
from ..data.sources import resolve_loaders
from ..distributed.rank_zero import rank_zero_info, rank_zero_warn
from ..errors import MisconfigurationException
from ..strategies.optimizers import LRSchedulerConfig
from ..tuner.attributes import lightning_hasattr, lightning_setattr
from ..tuner.batch_size_scaling import search_batch_size
from ..tuner.lr_finder import _determine_lr_attr_name, _ExponentialLR, _LinearLR, _LRCallback, _LRFinder
from ._run import Run
from .checkpointing.contents import restore_checkpoint
from .checkpointing.format import capture_rng_state, restore_rng_state
from .dispatch.hooks import HookDispatcher
from .display.progress import ProgressDisplay
from .loops._fit_data import train_loader_source, validation_loop
from .loops.evaluation import EvaluationLoop
from .loops.fit import FitLoop
from .loops.prediction import PredictionLoop
from .state import LoopState, Stage

__all__ = ["check_batch_size_setup", "lr_find", "scale_batch_size"]


def _running(trainer: Any, what: str) -> Run:
    run: Run | None = trainer._run
    if run is None or trainer._stage_run is None:
        raise MisconfigurationException(
            f"{what} runs inside a Trainer call: use Tuner(trainer).{what}(model) or its callback, whose hooks "
            "run it during trainer.fit()."
        )
    if run.stage is not Stage.FITTING or run.optim is None:
        raise MisconfigurationException(f"{what} needs a running fit (its optimizers); the call is {run.stage.value}.")
    return run


# ---- the state around the trials ---------------------------------------------------------------------
def _snapshot(state: LoopState) -> dict[str, Any]:
    saved = {f.name: getattr(state, f.name) for f in dataclasses.fields(state)}
    return {name: dict(value) if isinstance(value, dict) else value for name, value in saved.items()}


def _put_back(state: LoopState, saved: dict[str, Any]) -> None:
    for name, value in saved.items():
        setattr(state, name, dict(value) if isinstance(value, dict) else value)


@contextlib.contextmanager
def _kept(trainer: Any, run: Run, prefix: str) -> Iterator[None]:
    """The run's weights, optimizer and scheduler states (through a temporary checkpoint file, removed after),
    its counters and its log router, all put back however the trials ended."""
    name = f".{prefix}_{uuid.uuid4()}.ckpt"
    path = Path(run.strategy.broadcast_object(os.fspath(Path(trainer.default_root_dir) / name)))
    trainer.save_checkpoint(path)
    saved = _snapshot(run.state)
    router = run.router
    routed = (router.fx, router.collector, router.batch, router.batch_size)
    try:
        yield
    finally:
        try:
            restore_checkpoint(run, path, weights_only=True, training=True)
        finally:
            run.strategy.remove_checkpoint(path)
            _put_back(run.state, saved)
            router.fx, router.collector, router.batch, router.batch_size = routed


@contextlib.contextmanager
def _isolated_rng(run: Run) -> Iterator[None]:
    """The random generators as they were, whatever the block drew (Lightning's ``isolate_rng`` around lr_find)."""
    accelerator = run.strategy.accelerator
    state = capture_rng_state(accelerator)
    try:
        yield
    finally:
        restore_rng_state(state, accelerator)


# ---- one trial fit ---------------------------------------------------------------------------------------
def _trial_fit(run: Run, callbacks: Sequence[object], loader: Any, **limits: Any) -> None:
    """The fit loop again on ``run`` from its current counters, with only ``callbacks`` and the given limits."""
    router = run.router

    def enter(fx: str) -> None:
        router.fx = fx

    options = dataclasses.replace(run.options, **limits)
    hooks = HookDispatcher(run.trainer, run.module, list(callbacks), on_enter=enter, datamodule=run.datamodule)
    trial = dataclasses.replace(run, hooks=hooks, options=options, loggers=[], csv_path=None, chatty=False)
    state = trial.state
    state.should_stop, state.stop_reason = False, None
    val_loop = validation_loop(trial, state.fit_given[1], run.module, run.datamodule, None)
    loop = FitLoop(trial, loader, val_loop, ProgressDisplay())
    optimizing = (
        run.module._optimizing_with(loop.opt) if isinstance(run.module, LightningModule) else contextlib.nullcontext()
    )
    trainer = run.trainer
    given = trainer.options
    trainer.options = options  # Lightning's trial sets the trainer's own limits: hooks see ``fit_loop.max_steps``
    try:
        with optimizing:
            loop.run()
    finally:
        trainer.options = given


# ---- the learning-rate finder ---------------------------------------------------------------------------------
def lr_find(
    trainer: Any,
    module: torch.nn.Module,
    *,
    min_lr: float,
    max_lr: float,
    num_training: int,
    mode: str,
    early_stop_threshold: float | None,
    update_attr: bool,
    attr_name: str,
) -> _LRFinder | None:
    """The range test from the running fit's current state; the fit then goes on from that same state (with
    the suggested rate, when ``update_attr``)."""
    if trainer.fast_dev_run:
        rank_zero_warn("Skipping learning rate finder since `fast_dev_run` is enabled.")
        return None
    run = _running(trainer, "lr_find")
    if update_attr:
        attr_name = _determine_lr_attr_name(module, attr_name)
    optim = run.optim
    assert optim is not None
    if len(optim.optimizers) != 1:
        raise MisconfigurationException(
            f"`model.configure_optimizers()` returned {len(optim.optimizers)}, but learning rate finder only works "
            "with single optimizer"
        )
    finder = _LRFinder(mode, min_lr, max_lr, num_training)
    start_step = run.state.global_step
    schedulers = list(optim.schedulers)
    finished = False
    with _isolated_rng(run), _kept(trainer, run, "lr_find"):
        optimizer = optim.optimizers[0]
        for group in optimizer.param_groups:
            group["lr"] = min_lr
            group["initial_lr"] = min_lr
        scheduler_type = _LinearLR if mode == "linear" else _ExponentialLR
        scheduler = scheduler_type(optimizer, max_lr, num_training)
        optim.schedulers[:] = [LRSchedulerConfig(scheduler, interval="step")]
        recorder = _LRCallback(num_training, early_stop_threshold, progress_bar_refresh_rate=1, scheduler=scheduler)
        try:
            assert run.state.train_source is not None  # set by every fit before its hooks run
            loader, _ = run.state.train_source()
            limits = {"max_steps": num_training + start_step, "limit_val_batches": num_training}
            _trial_fit(run, [recorder], loader, **limits)
        finally:
            optim.schedulers[:] = schedulers
        if run.state.global_step != num_training + start_step:
            rank_zero_info(f"LR finder stopped early after {run.state.global_step} steps due to diverging loss.")
        finder.results = run.strategy.broadcast_object({"lr": recorder.lrs, "loss": recorder.losses})
        finder._total_batch_idx = trainer.fit_loop.total_batch_idx  # batches, not steps, under accumulation
        finished = True
    if update_attr and finished:
        lr = finder.suggestion()
        if lr is not None:  # after the restore, so the fit that follows trains with it
            lightning_setattr(module, attr_name, lr)
            for optimizer in optim.optimizers:
                for group in optimizer.param_groups:
                    group["lr"] = lr
            rank_zero_info(f"Learning rate set to {lr}")
    return finder


# ---- the batch-size finder -----------------------------------------------------------------------------------
def _dataset_length(loaders: Sequence[Any]) -> int | None:
    """The largest data set among ``loaders`` (a combined loader's too), None when none has a length."""
    lengths = []
    for given in loaders:
        for loader in getattr(given, "flattened", None) or [given]:
            try:
                lengths.append(len(loader.dataset))
            except (TypeError, AttributeError):
                continue
    return max(lengths) if lengths else None


class _FitTrials:
    """:class:`accelplug.tuner.batch_size_scaling.Trials` for a fit: ``steps_per_trial`` steps from the start."""

    def __init__(self, trainer: Any, run: Run, steps_per_trial: int) -> None:
        self.trainer, self.run, self.module = trainer, run, run.module
        self.steps = steps_per_trial
        self.start = _snapshot(run.state)
        self.loader: Any = None
        self.reset_loaders()

    def reset_loaders(self) -> None:
        self.loader = train_loader_source(self.trainer, None, self.module, self.run.datamodule)()[0]

    def dataset_length(self) -> int | None:
        return _dataset_length([self.loader])

    def run_trial(self) -> None:
        _put_back(self.run.state, self.start)
        limits = {"max_steps": self.steps, "limit_train_batches": 1.0, "limit_val_batches": self.steps}
        _trial_fit(self.run, [], self.loader, **limits)


class _EvaluationTrials:
    """:class:`accelplug.tuner.batch_size_scaling.Trials` for validate, test or predict: ``steps_per_trial``
    batches of the call's loop, without callbacks or loggers (nothing is trained, so nothing is put back)."""

    def __init__(self, trainer: Any, run: Run, steps_per_trial: int) -> None:
        self.trainer, self.run, self.module = trainer, run, run.module
        self.steps = steps_per_trial
        self.name = _EVALUATION_CALLS[run.stage]
        self.loaders: list[Any] = []
        self.reset_loaders()

    def reset_loaders(self) -> None:
        found, _, _ = resolve_loaders(self.name, None, self.module, self.run.datamodule, required=True)
        self.loaders = self.run.prepare_loaders(found, _LOADER_PREFIXES[self.name])

    def dataset_length(self) -> int | None:
        return _dataset_length(self.loaders)

    def run_trial(self) -> None:
        run = self.run
        router = run.router

        def enter(fx: str) -> None:
            router.fx = fx

        hooks = HookDispatcher(run.trainer, run.module, [], on_enter=enter, datamodule=run.datamodule)
        trial = dataclasses.replace(run, hooks=hooks, loggers=[], csv_path=None, chatty=False)
        if run.stage is Stage.PREDICTING:
            PredictionLoop(trial, self.loaders, limit=self.steps).predict()
        else:
            EvaluationLoop(trial, self.loaders, run.stage, limit=self.steps).evaluate(publish=False)


#: The calls whose batch size the finder tunes besides fit, by stage: the loader method's stage name.
_EVALUATION_CALLS = {Stage.VALIDATING: "validate", Stage.TESTING: "test", Stage.PREDICTING: "predict"}
#: Lightning's names of the loaders of each call, for the message about several loaders.
_LOADER_PREFIXES = {"validate": "val", "test": "test", "predict": "predict"}


def _scale_for_evaluation(trainer: Any, run: Run, search: Any, steps_per_trial: int, batch_arg_name: str) -> int:
    """The search for a validate, test or predict call, from its start hook; the call's loop then takes the
    loaders made at the size found (``run.tuned_loaders``)."""
    trials = _EvaluationTrials(trainer, run, steps_per_trial)
    _refuse_several_loaders(_EVALUATION_CALLS[run.stage], len(trials.loaders))
    saved = _snapshot(run.state)
    try:
        size: int = search(trials)
    finally:
        _put_back(run.state, saved)
    trials.reset_loaders()
    run.tuned_loaders = trials.loaders
    return size


def check_batch_size_setup(trainer: Any, module: torch.nn.Module, stage: str | None, batch_arg_name: str) -> None:
    """What ``BatchSizeFinder.setup`` refuses (Lightning's rules): distributed runs, loaders handed straight to
    ``fit``, several loaders for validate/test/predict, and a ``batch_arg_name`` found nowhere."""
    if trainer.strategy.is_distributed:  # as configured (Lightning's rule), on one device too
        raise MisconfigurationException(
            f"The Batch size finder is not supported with distributed strategies (strategy={trainer.strategy.name!r}); "
            "find the size on one device, then pass it to the distributed run."
        )
    if stage in (None, "fit"):
        if trainer.state.fit_given[0] is not None:
            raise MisconfigurationException(
                "The Batch size finder cannot be used with dataloaders passed directly to `.fit()`. Please disable "
                "the feature or incorporate the dataloader into your LightningModule or LightningDataModule."
            )
    else:  # Lightning asks for the call's loaders here, so this comes before any check of the loop's
        given, datamodule = trainer.state.eval_given, trainer.datamodule
        loaders, _, _ = resolve_loaders(stage, given, module, datamodule, required=False)
        _refuse_several_loaders(stage, len(loaders))
    _check_attribute(module, batch_arg_name)


def _refuse_several_loaders(call: str, count: int) -> None:
    if count > 1:
        raise MisconfigurationException(
            f"The Batch size finder cannot be used with multiple {_LOADER_PREFIXES[call]} dataloaders "
            f"({count} given); tune with one, then pass the size to the call with all of them."
        )


def _check_attribute(module: torch.nn.Module, batch_arg_name: str) -> None:
    if not lightning_hasattr(module, batch_arg_name):
        raise MisconfigurationException(
            f"Field {batch_arg_name} not found in `model`, `datamodule`, nor their `hparams` attributes."
        )
    hparams = getattr(module, "hparams", None)
    if hasattr(module, batch_arg_name) and hparams is not None and batch_arg_name in hparams:
        rank_zero_warn(
            f"Field `model.{batch_arg_name}` and `model.hparams.{batch_arg_name}` are mutually exclusive! "
            f"`model.{batch_arg_name}` will be used as the initial batch size for scaling. If this is not the "
            "intended behavior, please remove either one."
        )


def scale_batch_size(
    trainer: Any,
    module: torch.nn.Module,
    *,
    mode: str,
    steps_per_trial: int,
    init_val: int,
    max_trials: int,
    batch_arg_name: str,
    margin: float,
    max_val: int,
) -> int | None:
    """The largest batch size whose trial fits in memory; the fit then goes on from its state with that size."""
    if trainer.fast_dev_run:
        rank_zero_warn("Skipping batch size scaler since `fast_dev_run` is enabled.")
        return None

    def search(trials: Any) -> int:
        return search_batch_size(trials, mode, init_val, max_trials, batch_arg_name, margin, max_val)

    current: Run | None = getattr(trainer, "_stage_run", None)
    if current is not None and current.stage in _EVALUATION_CALLS:
        return _scale_for_evaluation(trainer, current, search, steps_per_trial, batch_arg_name)
    run = _running(trainer, "scale_batch_size")
    try:
        with _kept(trainer, run, "scale_batch_size"):
            size = search(_FitTrials(trainer, run, steps_per_trial))
    finally:  # the fit goes on with loaders of the size reached (made when it asks for them)
        trainer.state.train_source = train_loader_source(trainer, None, module, run.datamodule)
    _record_scaled_loaders(trainer, run)
    return size


def _record_scaled_loaders(trainer: Any, run: Run) -> None:
    """Make the loaders at the size found now, as Lightning does once the search ends, so
    ``trainer.train_dataloader`` and ``trainer.val_dataloaders`` show it (also after ``Tuner`` ends the call)."""
    train_source = trainer.state.train_source
    if train_source is not None:
        train_source()
    val_loop = validation_loop(run, run.state.fit_given[1], run.module, run.datamodule, None)
    if val_loop is not None:
        val_loop.loaders  # noqa: B018 - asking records them (trainer.val_dataloaders, num_val_batches)
