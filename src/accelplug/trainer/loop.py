"""The fit, validation and prediction loops.

The training step is kept lean, because on a small model the loop's own Python is a measurable part
of each step: hooks a callback does not define are not called, the loss stays on the device
(detached) and is read back only every ``log_every_n_steps`` optimizer steps, the progress display
costs one clock read, and on a single device ``training_step`` is called directly rather than
through an extra ``nn.Module`` call.

Exact resumption: at the start of each epoch the random-number state is recorded. A checkpoint
stores that state, how many batches of the epoch were consumed, and the state at saving time. On
resume the epoch-start state is put back before the data loader's iterator is created (so a
shuffling sampler draws the same order), the consumed batches are skipped, and then the saving-time
state is restored: the remaining steps see exactly what the uninterrupted run saw.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from ..errors import MisconfigurationException
from .callbacks import HOOKS
from .checkpoint import capture_rng_state, load_checkpoint, restore_rng_state
from .data import batch_size_of, make_transfer, pin_for_cuda
from .environment import apply_accelerator_defaults, seed_everything
from .optim import OptimizerSetup, parse_optimizers
from .precision import Precision
from .self_log import LogSink, attached_log

if TYPE_CHECKING:
    from .loggers import MetricsLogger
    from .progress import Progress
    from .trainer import Trainer

__all__ = ["Run", "checkpoint_state", "fit_loop", "predict_only", "validate_only"]

_DEFAULT_MAX_EPOCHS = 1000


@dataclass
class Run:
    """Everything one fit/validate/predict call set up, kept so ``save_checkpoint`` works after it."""

    model: torch.nn.Module
    device: torch.device
    precision: Precision
    transfer: Callable[[Any], Any]
    optim: OptimizerSetup | None = None
    wrapped: torch.nn.Module | None = None
    loggers: list[MetricsLogger] = field(default_factory=list)
    csv_path: Path | None = None
    hooks: dict[str, list[Callable[..., Any]]] = field(default_factory=dict)
    #: Loop position for checkpoints.
    batches_done: int = 0
    epoch_done: bool = False
    epoch_start_rng: dict[str, Any] | None = None
    #: Values the module reported through ``self.log``.
    logged: LogSink = field(default_factory=LogSink)


# ---- setup ---------------------------------------------------------------------------------------
def _setup(trainer: Trainer, model: torch.nn.Module) -> Run:
    device = trainer.root_device
    trainer.strategy.setup(trainer.accelerator, device)
    precision = Precision.create(trainer.precision, device.type)
    notes = apply_accelerator_defaults(device.type)
    if notes and trainer.is_global_zero and trainer.options.enable_progress_bar:
        for note in notes:
            print(f"accelplug: {note}", file=sys.stderr)
    trainer.setup_notes = notes
    if precision.param_dtype is not None:
        model.to(dtype=precision.param_dtype)
    model.to(device)
    run = Run(model, device, precision, make_transfer(device, precision.param_dtype))
    run.hooks = {
        name: [getattr(c, name) for c in trainer.callbacks if callable(getattr(c, name, None))] for name in HOOKS
    }
    return run


def _open_loggers(trainer: Trainer, run: Run) -> None:
    option = trainer.options.logger
    if option is False or not trainer.is_global_zero:
        return
    from .loggers import CSVLogger, TensorBoardLogger

    csv_logger = CSVLogger(trainer.log_dir)
    run.loggers.append(csv_logger)
    run.csv_path = csv_logger.path
    if option == "tensorboard":
        run.loggers.append(TensorBoardLogger(trainer.log_dir))


def _log(run: Run, metrics: dict[str, float], step: int) -> None:
    for logger in run.loggers:
        logger.log_metrics(metrics, step)


def _close(trainer: Trainer, run: Run) -> None:
    for logger in run.loggers:
        logger.close()
    trainer.strategy.barrier()


def _limit(limit: float, loader: Any) -> int | None:
    """How many batches ``limit_*_batches`` allows per epoch (None: all of them)."""
    if isinstance(limit, int):
        return limit
    if limit >= 1.0:
        return None
    try:
        return int(len(loader) * limit)
    except TypeError:
        raise MisconfigurationException(
            f"a fractional batch limit ({limit}) needs a data loader with a length; pass an int number of batches."
        ) from None


def _epoch_length(loader: Any, limit: int | None) -> int | None:
    try:
        length = len(loader)
    except TypeError:
        return limit
    return length if limit is None else min(length, limit)


def _single_loader(value: Any, what: str) -> Any:
    """The one loader in ``value``; a list of batches (not of loaders) is itself the loader."""
    from torch.utils.data import DataLoader

    if isinstance(value, (list, tuple)) and value and all(isinstance(v, DataLoader) for v in value):
        if len(value) != 1:
            raise MisconfigurationException(f"{what} takes one DataLoader (got a sequence of {len(value)}).")
        return value[0]
    return value


# ---- checkpoints ---------------------------------------------------------------------------------
def checkpoint_state(trainer: Trainer, run: Run) -> dict[str, Any]:
    """What ``save_checkpoint`` writes: only tensors and plain values, so it loads weights-only."""
    from .trainer import CHECKPOINT_FORMAT

    optim = run.optim
    return {
        "accelplug_checkpoint": CHECKPOINT_FORMAT,
        "state_dict": run.model.state_dict(),
        "optimizer_states": [o.state_dict() for o in optim.optimizers] if optim else [],
        "lr_schedulers": [s.scheduler.state_dict() for s in optim.schedulers] if optim else [],
        "scaler": run.precision.scaler.state_dict() if run.precision.scaler is not None else None,
        "precision": run.precision.name,
        "loop": {
            "epoch": trainer.current_epoch,
            "global_step": trainer.global_step,
            "batches_done": run.batches_done,
            "epoch_done": run.epoch_done,
        },
        "rng": capture_rng_state(),
        "epoch_start_rng": run.epoch_start_rng,
    }


def _restore(trainer: Trainer, run: Run, path: Any, weights_only: bool) -> dict[str, Any]:
    state = load_checkpoint(path, run.device, weights_only=weights_only)
    if not isinstance(state, dict) or "accelplug_checkpoint" not in state:
        raise MisconfigurationException(f"ckpt_path={str(path)!r} is not an accelplug checkpoint.")
    run.model.load_state_dict(state["state_dict"])
    assert run.optim is not None
    if len(state["optimizer_states"]) != len(run.optim.optimizers):
        raise MisconfigurationException(
            f"ckpt_path={str(path)!r} holds {len(state['optimizer_states'])} optimizer state(s), but "
            f"configure_optimizers() returned {len(run.optim.optimizers)}."
        )
    for optimizer, saved in zip(run.optim.optimizers, state["optimizer_states"], strict=True):
        optimizer.load_state_dict(saved)
    for config, saved in zip(run.optim.schedulers, state["lr_schedulers"], strict=False):
        config.scheduler.load_state_dict(saved)
    if run.precision.scaler is not None and state.get("scaler"):
        run.precision.scaler.load_state_dict(state["scaler"])
    loop = state["loop"]
    trainer.current_epoch = int(loop["epoch"])
    trainer.global_step = int(loop["global_step"])
    run.batches_done = int(loop["batches_done"])
    run.epoch_done = bool(loop["epoch_done"])
    run.epoch_start_rng = state.get("epoch_start_rng")
    return state


# ---- training ------------------------------------------------------------------------------------
class _StepRouter(torch.nn.Module):
    """Lets DDP's forward call ``training_step``, so its gradient hooks see the real computation."""

    def __init__(self, module: torch.nn.Module) -> None:
        super().__init__()
        self.module = module

    def forward(self, batch: Any, batch_idx: int) -> Any:
        training_step: Callable[[Any, int], Any] = getattr(self.module, "training_step")  # noqa: B009
        return training_step(batch, batch_idx)


def _loss_of(output: Any) -> torch.Tensor:
    if isinstance(output, torch.Tensor):
        return output
    loss = output.get("loss") if isinstance(output, dict) else None
    if isinstance(loss, torch.Tensor):
        return loss
    raise MisconfigurationException(
        f"training_step must return a loss tensor or a dict with a 'loss' tensor; it returned {type(output).__name__}."
    )


def _scalars(output: Any, loss_name: str) -> dict[str, torch.Tensor]:
    """Scalar metrics in a step's output: the loss under ``loss_name``, other entries as named."""
    if isinstance(output, torch.Tensor):
        return {loss_name: output.detach()}
    found: dict[str, torch.Tensor] = {}
    if isinstance(output, dict):
        for key, value in output.items():
            name = loss_name if key == "loss" else str(key)
            if isinstance(value, torch.Tensor) and value.numel() == 1:
                found[name] = value.detach().reshape(())
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                found[name] = torch.tensor(float(value))
    return found


def _reduce(trainer: Trainer, values: dict[str, torch.Tensor], device: torch.device) -> dict[str, float]:
    """Average scalar tensors across processes and read them back with one host-device sync."""
    if not values:
        return {}
    stacked = torch.stack([v.to(device=device, dtype=torch.float32) for v in values.values()])
    reduced = trainer.strategy.reduce_mean(stacked).tolist()
    return dict(zip(values, reduced, strict=True))


def _clip(trainer: Trainer, run: Run) -> None:
    value = trainer.options.gradient_clip_val
    if not value:
        return
    assert run.optim is not None
    for optimizer in run.optim.optimizers:
        run.precision.unscale(optimizer)
        params = [p for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
        if trainer.options.gradient_clip_algorithm == "norm":
            torch.nn.utils.clip_grad_norm_(params, value)
        else:
            torch.nn.utils.clip_grad_value_(params, value)


def _step_schedulers(run: Run, interval: str, count: int, metrics: dict[str, float]) -> None:
    assert run.optim is not None
    for config in run.optim.schedulers:
        if config.interval != interval or count % config.frequency:
            continue
        if config.monitor is not None:
            if config.monitor not in metrics:
                raise MisconfigurationException(
                    f"lr_scheduler monitors {config.monitor!r}, which was not logged; logged: {sorted(metrics)}."
                )
            config.scheduler.step(metrics[config.monitor])
        else:
            config.scheduler.step()


def _val_every(trainer: Trainer, epoch_length: int | None) -> int | None:
    """Validate after every N training batches (None: only at the end of each epoch)."""
    interval = trainer.options.val_check_interval
    if interval is None:
        return None
    if isinstance(interval, int):
        return interval
    if epoch_length is None:
        raise MisconfigurationException(
            f"val_check_interval={interval} is a fraction of an epoch, but the training data has no length; "
            "pass an int number of batches."
        )
    return max(1, int(epoch_length * interval)) if interval < 1.0 else None


def _batches(loader: Any, skip: int, saved_rng: dict[str, Any] | None) -> Iterator[Any]:
    """The loader's batches after the first ``skip``; then the saving-time RNG state is restored."""
    iterator = iter(loader)
    for _ in range(skip):
        next(iterator, None)
    if saved_rng is not None:
        restore_rng_state(saved_rng)
    return iterator  # type: ignore[no-any-return]


def fit_loop(
    trainer: Trainer,
    model: torch.nn.Module,
    train_dataloaders: Any,
    val_dataloaders: Any,
    ckpt_path: Any,
    weights_only: bool,
) -> None:
    options = trainer.options
    if options.seed is not None:
        seed_everything(options.seed)
    run = _setup(trainer, model)
    # Every rank must name the same run folder (checkpoint paths are reported on all of them).
    trainer._log_dir = trainer.strategy.broadcast_object(trainer.log_dir)
    shuffle_seed = options.seed or 0
    train_loader = trainer.strategy.prepare_dataloader(
        pin_for_cuda(_single_loader(train_dataloaders, "train_dataloaders"), run.device), shuffle_seed=shuffle_seed
    )
    val_loader = None
    if val_dataloaders is not None and callable(getattr(model, "validation_step", None)):
        val_loader = trainer.strategy.prepare_dataloader(
            pin_for_cuda(_single_loader(val_dataloaders, "val_dataloaders"), run.device), shuffle_seed=shuffle_seed
        )
    run.optim = parse_optimizers(getattr(model, "configure_optimizers")())  # noqa: B009
    wrapped = trainer.strategy.wrap_model(_StepRouter(model), run.device) if trainer.strategy.is_distributed else None
    run.wrapped = wrapped
    trainer._run = run
    trainer.global_step, trainer.current_epoch, trainer.should_stop = 0, 0, False
    resume: dict[str, Any] | None = None
    if ckpt_path is not None:
        resume = _restore(trainer, run, ckpt_path, weights_only)
    _open_loggers(trainer, run)
    limit = _limit(options.limit_train_batches, train_loader)
    val_limit = _limit(options.limit_val_batches, val_loader) if val_loader is not None else None
    epoch_length = _epoch_length(train_loader, limit)
    max_steps = options.max_steps if options.max_steps is not None and options.max_steps > 0 else None
    max_epochs = options.max_epochs
    if max_epochs is None:
        max_epochs = _DEFAULT_MAX_EPOCHS if max_steps is None else sys.maxsize
    total = max_steps
    if epoch_length is not None and max_epochs < sys.maxsize:
        by_epochs = max_epochs * math.ceil(epoch_length / options.accumulate_grad_batches)
        total = by_epochs if total is None else min(total, by_epochs)
    from .progress import make_progress

    progress: Progress = make_progress(options.enable_progress_bar and trainer.is_global_zero)
    model.train()
    for hook in run.hooks["on_fit_start"]:
        hook(trainer, model)
    progress.start(total, trainer.current_epoch, max_epochs)
    try:
        with attached_log(model, run.logged):
            _train(
                trainer,
                run,
                train_loader,
                val_loader,
                val_limit,
                limit,
                epoch_length,
                max_epochs,
                max_steps,
                progress,
                resume,
            )
    finally:
        progress.stop()
    for hook in run.hooks["on_fit_end"]:
        hook(trainer, model)
    _close(trainer, run)


def _train(
    trainer: Trainer,
    run: Run,
    train_loader: Any,
    val_loader: Any,
    val_limit: int | None,
    limit: int | None,
    epoch_length: int | None,
    max_epochs: int,
    max_steps: int | None,
    progress: Progress,
    resume: dict[str, Any] | None,
) -> None:
    options = trainer.options
    model = run.model
    assert run.optim is not None
    optimizers = run.optim.optimizers
    step_schedulers = any(s.interval == "step" for s in run.optim.schedulers)
    precision = run.precision
    transfer = run.transfer
    accumulate = options.accumulate_grad_batches
    log_every = options.log_every_n_steps
    val_every = _val_every(trainer, epoch_length) if val_loader is not None else None
    batch_end_hooks = run.hooks["on_train_batch_end"]
    strategy = trainer.strategy
    wrapped = run.wrapped
    step_fn: Callable[[Any, int], Any] = wrapped if wrapped is not None else model.training_step  # type: ignore[assignment]
    forward_context = precision.forward_context
    autocast = precision.uses_autocast
    # No scaler, no clipping, no DDP accumulation: backward and step need no help from us.
    plain_step = precision.scaler is None and not options.gradient_clip_val and (wrapped is None or accumulate == 1)
    samples_per_batch = 0
    samples = 0
    last_loss: float | None = None

    epoch = trainer.current_epoch
    skip, saved_rng = 0, None
    if resume is not None:
        loop = resume["loop"]
        if loop["epoch_done"]:
            epoch += 1
            restore_rng_state(resume["rng"])
        else:
            skip, saved_rng = int(loop["batches_done"]), resume["rng"]
            restore_rng_state(resume["epoch_start_rng"])
    while epoch < max_epochs and not trainer.should_stop:
        if max_steps is not None and trainer.global_step >= max_steps:
            break
        trainer.current_epoch = epoch
        run.epoch_done = False
        strategy.set_epoch(train_loader, epoch)
        run.epoch_start_rng = capture_rng_state()
        run.batches_done = skip
        for batch_idx, raw_batch in enumerate(_batches(train_loader, skip, saved_rng), start=skip):
            if limit is not None and batch_idx >= limit:
                break
            batch = transfer(raw_batch)
            boundary = (batch_idx + 1) % accumulate == 0 or (epoch_length is not None and batch_idx + 1 == epoch_length)
            if autocast:
                with forward_context():
                    output = step_fn(batch, batch_idx)
            else:
                output = step_fn(batch, batch_idx)
            loss = output if type(output) is torch.Tensor else _loss_of(output)
            if accumulate > 1:
                loss = loss / accumulate
            if plain_step:
                loss.backward()  # type: ignore[no-untyped-call]
            elif boundary or wrapped is None:
                precision.backward(loss)
            else:
                with strategy.no_gradient_sync(wrapped):
                    precision.backward(loss)
            run.batches_done = batch_idx + 1
            trainer.at_step_boundary = boundary
            if boundary:
                if plain_step:
                    for optimizer in optimizers:
                        optimizer.step()
                else:
                    _clip(trainer, run)
                    for optimizer in optimizers:
                        precision.step(optimizer)
                    precision.update()
                for optimizer in optimizers:
                    optimizer.zero_grad()
                trainer.global_step += 1
                if step_schedulers:
                    _step_schedulers(run, "step", trainer.global_step, trainer.callback_metrics)
                if trainer.global_step % log_every == 0:
                    metrics = _reduce(trainer, {**run.logged.drain(), **_scalars(output, "train_loss")}, run.device)
                    last_loss = metrics.get("train_loss")
                    trainer.callback_metrics.update(metrics)
                    _log(run, {**metrics, "epoch": float(epoch)}, trainer.global_step)
            if not samples_per_batch:
                samples_per_batch = batch_size_of(batch) * trainer.world_size
            samples += samples_per_batch
            progress.tick(trainer.global_step, epoch, samples, last_loss)
            if val_every is not None and (batch_idx + 1) % val_every == 0:
                _validate(trainer, run, val_loader, val_limit)
            for hook in batch_end_hooks:
                hook(trainer, model, output, batch, batch_idx)
            if trainer.should_stop or (max_steps is not None and trainer.global_step >= max_steps):
                trainer.should_stop = True
                break
        skip, saved_rng = 0, None
        stopped_early = trainer.should_stop
        if stopped_early and not _epoch_complete(run, epoch_length):
            break
        # The epoch is complete: epoch-level validation, schedulers and callbacks.
        if val_loader is not None and val_every is None and (epoch + 1) % options.check_val_every_n_epoch == 0:
            _validate(trainer, run, val_loader, val_limit)
        _step_schedulers(run, "epoch", epoch + 1, trainer.callback_metrics)
        run.epoch_done = True
        progress.epoch_end(trainer.global_step, epoch, dict(trainer.callback_metrics))
        for hook in run.hooks["on_train_epoch_end"]:
            hook(trainer, model)
        for logger in run.loggers:
            logger.flush()
        epoch += 1
        if stopped_early:
            break


def _epoch_complete(run: Run, epoch_length: int | None) -> bool:
    return epoch_length is not None and run.batches_done >= epoch_length


# ---- evaluation ----------------------------------------------------------------------------------
def _evaluate(trainer: Trainer, run: Run, loader: Any, limit: int | None, method_name: str) -> dict[str, float]:
    """Average every scalar a step returns over the batches, then over the processes."""
    model = run.model
    method = getattr(model, method_name)
    was_training = model.training
    model.eval()
    sums: dict[str, torch.Tensor] = {}
    counts: dict[str, int] = {}
    training_logged = run.logged.drain()  # keep training values out of the validation averages
    with torch.no_grad():
        for batch_idx, raw_batch in enumerate(loader):
            if limit is not None and batch_idx >= limit:
                break
            with run.precision.forward_context():
                output = method(run.transfer(raw_batch), batch_idx)
            for name, value in {**run.logged.drain(), **_scalars(output, "val_loss")}.items():
                value = value.to(device=run.device, dtype=torch.float32)
                sums[name] = sums[name] + value if name in sums else value
                counts[name] = counts.get(name, 0) + 1
    model.train(was_training)
    run.logged.values.update(training_logged)
    means = {name: total / counts[name] for name, total in sums.items()}
    return _reduce(trainer, means, run.device)


def _validate(trainer: Trainer, run: Run, loader: Any, limit: int | None) -> None:
    metrics = _evaluate(trainer, run, loader, limit, "validation_step")
    trainer.callback_metrics.update(metrics)
    _log(run, {**metrics, "epoch": float(trainer.current_epoch)}, trainer.global_step)
    for hook in run.hooks["on_validation_end"]:
        hook(trainer, run.model)


def _eval_setup(trainer: Trainer, model: torch.nn.Module, dataloaders: Any) -> tuple[Run, Any]:
    run = _setup(trainer, model)
    trainer._run = run if trainer._run is None else trainer._run
    loader = trainer.strategy.prepare_dataloader(
        pin_for_cuda(_single_loader(dataloaders, "dataloaders"), run.device), shuffle_seed=trainer.options.seed or 0
    )
    return run, loader


def validate_only(trainer: Trainer, model: torch.nn.Module, dataloaders: Any, verbose: bool) -> dict[str, float]:
    run, loader = _eval_setup(trainer, model, dataloaders)
    with attached_log(model, run.logged):
        metrics = _evaluate(trainer, run, loader, _limit(trainer.options.limit_val_batches, loader), "validation_step")
    trainer.callback_metrics.update(metrics)
    if verbose and trainer.is_global_zero:
        print("validation: " + "  ".join(f"{k}={v:.4g}" for k, v in metrics.items()), file=sys.stderr)
    trainer.strategy.barrier()
    return metrics


def predict_only(trainer: Trainer, model: torch.nn.Module, dataloaders: Any) -> list[Any]:
    run, loader = _eval_setup(trainer, model, dataloaders)
    step = getattr(model, "predict_step", None)
    was_training = model.training
    model.eval()
    outputs: list[Any] = []
    with torch.no_grad():
        for batch_idx, raw_batch in enumerate(loader):
            batch = run.transfer(raw_batch)
            with run.precision.forward_context():
                outputs.append(step(batch, batch_idx) if callable(step) else model(batch))
    model.train(was_training)
    return outputs
