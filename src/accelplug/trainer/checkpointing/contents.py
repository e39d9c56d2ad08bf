"""What a checkpoint holds, and putting it back: the one place the checkpoint's contents are defined.

A checkpoint (format :data:`~accelplug.trainer.checkpointing.format.CHECKPOINT_FORMAT`) holds the module's
weights, each optimizer's and scheduler's state, the precision's (a gradient scaler's scale), the loop
position, every random generator, callback and datamodule state, the module's hyperparameters and
the latest metrics. Only tensors and plain values go in, so it loads with ``weights_only=True``, unless
the hyper-parameters hold other objects (Lightning saves them as they are, and so does accelplug).
Lightning's top-level keys (``epoch``, ``global_step``, ``hyper_parameters``, the datamodule's state under its
class's name) are kept, so either framework reads the other's files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import torch

from ...checkpoint.file import DIGEST_KEY
from ...checkpoint.migration import CheckpointKeyError
from ...data.combined_loader import loader_states
from ...distributed.rank_zero import rank_zero_warn
from ...errors import MisconfigurationException
from ...strategies.base import loads_optimizers_from_checkpoint
from ...strategies.state_dicts import SHARDED_KEY
from ..state import RunningStage
from .format import CHECKPOINT_FORMAT, capture_rng_state, read_checkpoint
from .lightning_loops import LIGHTNING_VERSION, lightning_loops

if TYPE_CHECKING:
    from ...precision.base import NumericPrecision
    from ...strategies.base import Strategy
    from ...strategies.optimizers import OptimizerSetup
    from .._run import Run
    from ..dispatch.hooks import HookDispatcher
    from ..state import LoopState

__all__ = [
    "CheckpointSource",
    "Restoring",
    "build_checkpoint",
    "read_for_restore",
    "restore_checkpoint",
    "restore_modules",
    "restore_training_state",
    "restores_after_setup",
]


def _callback_key(callback: object, seen: dict[str, int]) -> str:
    key = getattr(callback, "state_key", None) or type(callback).__qualname__
    count = seen.get(key, 0)
    seen[key] = count + 1
    return key if count == 0 else f"{key}#{count}"


class CheckpointSource(Protocol):
    """What :func:`build_checkpoint` reads: a :class:`~accelplug.trainer._run.Run`, or for a module connected by hand
    (``trainer.strategy.connect(model)``) before any call, the Trainer's pieces (:func:`.saving.connected_source`)."""

    @property
    def state(self) -> LoopState: ...
    @property
    def strategy(self) -> Strategy: ...
    @property
    def optim(self) -> OptimizerSetup | None: ...
    @property
    def module(self) -> torch.nn.Module: ...
    @property
    def hooks(self) -> HookDispatcher: ...
    @property
    def datamodule(self) -> Any: ...
    @property
    def precision(self) -> NumericPrecision: ...


def build_checkpoint(run: CheckpointSource) -> dict[str, Any]:
    """Everything a later ``fit(..., ckpt_path=...)`` needs to continue exactly where this run is."""
    state, strategy, optim = run.state, run.strategy, run.optim
    checkpoint: dict[str, Any] = {
        # Lightning's trainer.current_epoch (the next epoch once one was left: 2 after a 2-epoch fit)
        "epoch": state.epoch,
        "global_step": state.global_step,
        # what Lightning 2.6 needs to load and resume this file (accelplug resumes from "loop")
        "pytorch-lightning_version": LIGHTNING_VERSION,
        "state_dict": strategy.module_state_dict(run.module),
        "loops": lightning_loops(
            state,
            automatic=getattr(run.module, "automatic_optimization", True),
            validating=state.stage is RunningStage.VALIDATING,
        ),
        "callbacks": {},
        "optimizer_states": [strategy.optimizer_state_dict(run.module, o) for o in optim.optimizers] if optim else [],
        "lr_schedulers": [s.scheduler.state_dict() for s in optim.schedulers] if optim else [],
    }
    loader_positions = loader_states(state.train_loader) if state.train_loader is not None else []
    if loader_positions:  # stateful training iterables: where they stand, as Lightning keeps it
        checkpoint["loops"]["fit_loop"]["state_dict"]["combined_loader"] = loader_positions
    seen: dict[str, int] = {}
    for callback in run.hooks.callbacks:
        key = _callback_key(callback, seen)
        state_dict = getattr(callback, "state_dict", None)
        if callable(state_dict):
            saved = state_dict()
            if saved:
                checkpoint["callbacks"][key] = saved
    _add_hyperparameters(checkpoint, run.module, run.datamodule)
    datamodule_state = getattr(run.datamodule, "state_dict", None)
    saved_datamodule = datamodule_state() if callable(datamodule_state) else None
    if saved_datamodule:  # Lightning's key: the datamodule class's qualified name
        checkpoint[type(run.datamodule).__qualname__] = saved_datamodule
    run.hooks.call("on_save_checkpoint", checkpoint)  # Lightning's keys only, as its hooks receive them
    return {**checkpoint, **_accelplug_state(run)}  # a new dict: the one the hooks were given stays as they saw it


#: What accelplug adds to Lightning's keys for an exact resume; kept out of what the checkpoint hooks see.
ACCELPLUG_KEYS = frozenset(
    {
        "accelplug_checkpoint",
        DIGEST_KEY,
        "precision",
        "precision_state",
        "loop",
        "rng",
        "epoch_start_rng",
        "callback_metrics",
    }
)


def _accelplug_state(run: CheckpointSource) -> dict[str, Any]:
    """The format version, the precision's state, the exact loop position, every random generator and the metrics."""
    state = run.state
    return {
        "accelplug_checkpoint": CHECKPOINT_FORMAT,
        "precision": run.precision.name,
        "precision_state": run.precision.state_dict(),
        "loop": {
            "epoch": state.current_epoch,
            "global_step": state.global_step,
            "batches_stepped": state.batches_stepped,
            "batches_done": state.batches_done,
            "batches_in_past_epochs": state.batches_in_past_epochs,
            "epoch_first_step": state.epoch_first_step,
            "epoch_done": state.epoch_done,
            "epoch_schedulers_done": state.epoch_schedulers_done,
            "scheduler_steps": state.scheduler_steps,
            "scheduler_steps_in_epoch": state.scheduler_steps_in_epoch,
            "total_batches": state.batches_before_epoch + (0 if state.epoch_left else state.batches_done),
            "batches_that_stepped": state.stepped_before_epoch,
        },
        "rng": capture_rng_state(run.strategy.accelerator),
        "epoch_start_rng": state.epoch_start_rng,
        "callback_metrics": {k: float(v) for k, v in state.callback_metrics.items()},
    }


def _call_load_hooks(call: Callable[[dict[str, Any]], None], checkpoint: dict[str, Any]) -> None:
    """``on_load_checkpoint`` with Lightning's keys only (what its hooks receive); what a hook put in or took out
    at the top level is carried back into the checkpoint that is restored."""
    view = {k: v for k, v in checkpoint.items() if k not in ACCELPLUG_KEYS}
    call(view)
    for key in [k for k in checkpoint if k not in ACCELPLUG_KEYS and k not in view]:
        del checkpoint[key]
    checkpoint.update(view)


def _add_hyperparameters(checkpoint: dict[str, Any], module: Any, datamodule: Any) -> None:
    """The module's and the datamodule's ``hparams`` under Lightning's keys, as Lightning writes them: every
    value (one that is not a tensor or plain value then needs ``weights_only=False`` to load, as in Lightning),
    the argument one container came from (``hparams_name``), and the type of a mapping that is not a dict (an
    OmegaConf ``DictConfig``), so ``load_from_checkpoint`` rebuilds each the same way."""
    for obj in (module, datamodule):
        hparams = getattr(obj, "hparams", None) if obj is not None else None
        if not hparams:
            continue
        key = getattr(obj, "CHECKPOINT_HYPER_PARAMS_KEY", "hyper_parameters")
        if "_hparams_name" in vars(obj):
            checkpoint[getattr(obj, "CHECKPOINT_HYPER_PARAMS_NAME", "hparams_name")] = obj._hparams_name
        if isinstance(hparams, dict):
            checkpoint[key] = dict(hparams)
        else:
            checkpoint[key] = hparams
            checkpoint[getattr(obj, "CHECKPOINT_HYPER_PARAMS_TYPE", "hparams_type")] = type(hparams)


def _restore_datamodule(datamodule: Any, checkpoint: dict[str, Any]) -> None:
    """The datamodule's ``state_dict``, under Lightning's key (or ``datamodule``, where accelplug 0.x kept it)."""
    load = getattr(datamodule, "load_state_dict", None)
    if datamodule is None or not callable(load):
        return
    key = type(datamodule).__qualname__
    if key in checkpoint:
        load(checkpoint[key])
    elif "datamodule" in checkpoint:
        load(checkpoint["datamodule"])


@dataclass
class Restoring:
    """A checkpoint file read for one call and put back in Lightning's two halves: the module, datamodule and
    callbacks while the call is set up (before ``configure_optimizers()``), the optimizers, schedulers and loop once
    the strategy prepared the module (:func:`restore_training_state`)."""

    checkpoint: dict[str, Any]
    path: Path | str
    #: whether the module, datamodule and callbacks are back (False until then, and while a restore waits for setup)
    modules_done: bool = False

    @property
    def shown(self) -> str:
        return str(self.path)

    @property
    def sharded(self) -> dict[str, Any] | None:
        sharded: dict[str, Any] | None = self.checkpoint.get(SHARDED_KEY)
        return sharded


def read_for_restore(
    strategy: Strategy, path: Path | str, *, weights_only: bool | None, given: object = None
) -> Restoring:
    """Read and verify ``path`` where the strategy loads checkpoints, through its ``checkpoint_io`` (a writer of the
    user's is given ``given``, the path as the user wrote it, where there is one)."""
    checkpoint = read_checkpoint(
        path,
        strategy.checkpoint_map_location(),
        weights_only=weights_only,
        io=strategy.checkpoint_io,
        given=given,
    )
    return Restoring(checkpoint, path)


def restores_after_setup(strategy: Strategy, restoring: Restoring) -> bool:
    """Whether the whole restore waits until the strategy prepared the module: a strategy that says so (Lightning's
    ``restore_checkpoint_after_setup``: FSDP, DeepSpeed, a Lightning-written one) and a sharded file, whose shards
    load into the wrapped module and its optimizers."""
    return bool(strategy.restore_checkpoint_after_setup) or restoring.sharded is not None


def restore_modules(
    hooks: HookDispatcher, strategy: Strategy, module: torch.nn.Module, datamodule: Any, restoring: Restoring
) -> None:
    """The first half, while the call is set up (after ``configure_model``, before ``configure_optimizers()``), in
    Lightning's order and for every stage: the module's ``on_load_checkpoint``, its weights, the datamodule's
    state, then the callbacks' ``on_load_checkpoint``, which may replace what was loaded (``WeightAveraging`` puts
    the training weights back over the averaged ones the ``state_dict`` holds), and their state. Nothing happens
    where the restore waits for the setup (:func:`restores_after_setup`)."""
    if restores_after_setup(strategy, restoring):
        return
    _restore_modules(hooks, datamodule, restoring, lambda: strategy.load_module_state_dict(module, _weights(restoring)))


def restore_training_state(run: Run, restoring: Restoring, *, training: bool) -> dict[str, Any]:
    """The second half, once the module is prepared: the first half too where it waited for the setup, then
    (``training``) the optimizers, schedulers, precision and loop position. Returns the checkpoint."""
    if not restoring.modules_done:
        _restore_modules(run.hooks, run.datamodule, restoring, lambda: _load_weights(run, restoring, training))
    if training:
        _restore_training_state(
            run, restoring.checkpoint, restoring.shown, optimizers_loaded=restoring.sharded is not None
        )
    return restoring.checkpoint


def restore_checkpoint(run: Run, path: Path | str, *, weights_only: bool | None, training: bool) -> dict[str, Any]:
    """Both halves at once, into a call already set up (the tuner putting a run back as it was)."""
    return restore_training_state(
        run, read_for_restore(run.strategy, path, weights_only=weights_only), training=training
    )


def _restore_modules(
    hooks: HookDispatcher, datamodule: Any, restoring: Restoring, load_weights: Callable[[], None]
) -> None:
    checkpoint = restoring.checkpoint
    _call_load_hooks(lambda view: hooks.call_module("on_load_checkpoint", view), checkpoint)
    try:
        load_weights()
    except RuntimeError as exc:
        raise MisconfigurationException(
            f"ckpt_path={restoring.shown!r} does not fit this model: {str(exc).splitlines()[0]}"
        ) from None
    _restore_datamodule(datamodule, checkpoint)
    _call_load_hooks(lambda view: hooks.call_callbacks("on_load_checkpoint", view), checkpoint)
    _restore_callbacks(hooks, checkpoint)
    restoring.modules_done = True


def _weights(restoring: Restoring) -> dict[str, Any]:
    state: dict[str, Any] = restoring.checkpoint["state_dict"]
    return state


def _load_weights(run: Run, restoring: Restoring, training: bool) -> None:
    """The weights into the prepared module: from the shard folder beside a sharded file, else its ``state_dict``."""
    sharded, path = restoring.sharded, restoring.path
    if sharded is None:
        run.strategy.load_module_state_dict(run.module, _weights(restoring))
        return
    if isinstance(path, str):
        raise MisconfigurationException(
            f"ckpt_path={path!r} is a sharded checkpoint on a URL; its shard folder is read from local or "
            "mounted folders only. Copy the file and its folder locally and resume from there."
        )
    _restore_sharded(run, path, sharded, training=training)


def _restore_sharded(run: Run, path: Path, sharded: dict[str, Any], *, training: bool) -> None:
    """Module and optimizer tensors saved with torch.distributed.checkpoint (resharded to this run)."""
    folder = path.parent / str(sharded["folder"])
    if not folder.is_dir():
        raise MisconfigurationException(
            f"ckpt_path={str(path)!r} is a sharded checkpoint whose shard folder {folder} is missing; copy the "
            "folder along with the file."
        )
    optimizers = list(run.optim.optimizers) if training and run.optim else []
    if training and sharded.get("optimizers") is None:
        raise CheckpointKeyError(
            f"Trying to restore optimizer state but checkpoint contains only the model: ckpt_path={str(path)!r} "
            "holds no optimizer state, so training cannot resume from it exactly."
        )
    if training and sharded["optimizers"] != len(optimizers):
        raise MisconfigurationException(
            f"ckpt_path={str(path)!r} holds {sharded['optimizers']} optimizer state(s), but "
            f"configure_optimizers() returned {len(optimizers)}."
        )
    run.strategy.load_sharded_checkpoint(run.module, optimizers, folder)


def _restore_training_state(run: Run, checkpoint: dict[str, Any], shown: str, *, optimizers_loaded: bool) -> None:
    optim = run.optim
    assert optim is not None
    if run.strategy.lightning_restore_optimizer:  # False: the strategy restores them itself (Lightning's switch)
        if not optimizers_loaded:
            _restore_optimizers(run, checkpoint, shown)
        for config, saved in zip(optim.schedulers, checkpoint.get("lr_schedulers", []), strict=False):
            config.scheduler.load_state_dict(saved)
    _restore_loop(run, checkpoint)


def _restore_optimizers(run: Run, checkpoint: dict[str, Any], shown: str) -> None:
    optim = run.optim
    assert optim is not None
    saved_optimizers = checkpoint.get("optimizer_states")
    if saved_optimizers is None:
        raise CheckpointKeyError(  # Lightning's KeyError, with its words
            f"Trying to restore optimizer state but checkpoint contains only the model: ckpt_path={shown!r} holds no "
            "optimizer state (ModelCheckpoint(save_weights_only=True) writes such files), so training cannot resume "
            "from it exactly. Load its weights with validate/test(ckpt_path=...) or model.load_state_dict(), then "
            "start a new fit."
        )
    if not saved_optimizers:  # saved before any optimizer existed (a module connected by hand): fresh ones
        return
    if len(saved_optimizers) != len(optim.optimizers):
        raise MisconfigurationException(
            f"ckpt_path={shown!r} holds {len(saved_optimizers)} optimizer state(s), but "
            f"configure_optimizers() returned {len(optim.optimizers)}."
        )
    if loads_optimizers_from_checkpoint(run.strategy):
        run.strategy.load_optimizer_state_dict(checkpoint)  # type: ignore[call-arg, arg-type]  # a strategy written for Lightning
        return
    for optimizer, saved in zip(optim.optimizers, saved_optimizers, strict=True):
        try:
            run.strategy.load_optimizer_state_dict(run.module, optimizer, saved)
        except (ValueError, KeyError, RuntimeError) as exc:
            raise MisconfigurationException(
                f"ckpt_path={shown!r}: its optimizer state does not fit {type(optimizer).__name__}: {exc}"
            ) from None


def _restore_loop(run: Run, checkpoint: dict[str, Any]) -> None:
    """The precision's state and the loop position."""
    precision_state = checkpoint.get("precision_state", checkpoint.get("scaler"))
    if precision_state:
        run.precision.load_state_dict(precision_state)
    loop = checkpoint["loop"]
    state = run.state
    state.current_epoch = int(loop["epoch"])
    max_epochs = run.trainer.max_epochs
    finished = state.current_epoch + (1 if loop["epoch_done"] else 0)  # Lightning's current_epoch of the file
    if max_epochs is not None and max_epochs != -1 and finished > max_epochs:
        raise MisconfigurationException(
            f"You restored a checkpoint with current_epoch={finished}, but you have set "
            f"Trainer(max_epochs={max_epochs}): the run it continues is already past that limit. Raise max_epochs "
            "to train on, or load the weights alone (model.load_state_dict, or validate/test with ckpt_path)."
        )
    state.global_step = int(loop["global_step"])
    state.batches_stepped = int(loop.get("batches_stepped", state.global_step))  # older files: one optimizer
    state.batches_done = int(loop["batches_done"])
    state.batches_in_past_epochs = int(loop.get("batches_in_past_epochs", 0))
    state.epoch_first_step = int(loop.get("epoch_first_step", 0))
    state.epoch_done = bool(loop["epoch_done"])
    state.epoch_schedulers_done = bool(loop.get("epoch_schedulers_done", True))
    state.scheduler_steps = int(loop.get("scheduler_steps", 0))
    state.scheduler_steps_in_epoch = int(loop.get("scheduler_steps_in_epoch", 0))
    in_epoch = 0 if state.epoch_done else state.batches_done  # a finished epoch is counted in the total
    state.batches_before_epoch = int(loop.get("total_batches", in_epoch)) - in_epoch
    state.stepped_before_epoch = int(loop.get("batches_that_stepped", 0))
    state.epoch_start_rng = checkpoint.get("epoch_start_rng")
    state.callback_metrics.update({k: torch.tensor(v) for k, v in checkpoint.get("callback_metrics", {}).items()})


def _restore_callbacks(hooks: HookDispatcher, checkpoint: dict[str, Any]) -> None:
    """Each callback's saved state back into it; a state no callback of this Trainer takes is warned about (a
    callback left out of the resumed run would silently start afresh), with Lightning's words."""
    saved = checkpoint.get("callbacks") or {}
    seen: dict[str, int] = {}
    keys: list[object] = []
    for callback in hooks.callbacks:
        key = _callback_key(callback, seen)
        keys.append(key)
        load = getattr(callback, "load_state_dict", None)
        if key in saved and callable(load):
            load(saved[key])
        elif type(callback) in saved and callable(load):  # Lightning 0.10 to 1.x keyed a state by the class
            keys.append(type(callback))
            load(saved[type(callback)])
    missing = [key for key in saved if key not in keys]
    if missing:
        rank_zero_warn(
            "Be aware that when using `ckpt_path`, callbacks used to create the checkpoint need to be provided "
            f"during `Trainer` instantiation. Please add the following callbacks: {missing}."
        )
