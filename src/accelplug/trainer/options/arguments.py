"""Checks of what a Trainer method was given, before anything is set up."""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING, Any

import torch
from torch.multiprocessing.spawn import ProcessRaisedException

from ...callbacks.base import Checkpoint
from ...errors import MisconfigurationException
from ...overrides import overrides
from .entries import TrainerOptions

if TYPE_CHECKING:
    from ...profilers import Profiler

__all__ = [
    "NoModelAttached",
    "NotALightningModule",
    "PredictionsNotReturnable",
    "check_checkpointing",
    "check_manual_options",
    "check_model",
    "check_predict_model",
    "compile_options_for",
    "path_in_datamodule_slot",
    "profiler_for",
    "require_tensorboard",
    "warn_fit_validation",
    "warn_unknown_variables",
]

_warned_variables: set[str] = set()


def require_tensorboard() -> None:
    """Fail at construction, not after setup, when TensorBoard logging cannot work."""
    import importlib.util

    if importlib.util.find_spec("tensorboard") is None:
        raise MisconfigurationException(
            "logger='tensorboard' needs the tensorboard package, which is not installed: "
            'pip install "accelplug[tensorboard]" (or use logger=True for the CSV file only).'
        )


def check_checkpointing(options: TrainerOptions, callbacks: list[Any]) -> None:
    quiet = options.fast_dev_run or options.barebones
    found = next((c for c in callbacks if isinstance(c, Checkpoint)), None)  # Lightning's test: any Checkpoint
    if not options.enable_checkpointing and not quiet and found is not None:
        raise MisconfigurationException(
            f"Trainer was configured with `enable_checkpointing=False` but found `ModelCheckpoint` in callbacks "
            f"list (a {type(found).__name__}); remove one of the two."
        )


def warn_unknown_variables() -> None:
    from ...envvars import check_unknown_variables

    for line in check_unknown_variables():
        if line not in _warned_variables:
            _warned_variables.add(line)
            warnings.warn(line, UserWarning, stacklevel=3)


def path_in_datamodule_slot(datamodule: Any, ckpt_path: Any) -> tuple[Any, Any]:
    """(datamodule, ckpt_path) whichever slot each was passed in: a path can only be meant as the checkpoint,
    and an object that is not one as the datamodule (``predict`` takes the datamodule third, ``validate``
    and ``test`` the checkpoint, as in Lightning)."""
    if isinstance(datamodule, (str, os.PathLike)) and ckpt_path is None:
        return None, datamodule
    if ckpt_path is not None and not isinstance(ckpt_path, (str, os.PathLike)) and datamodule is None:
        return ckpt_path, None
    return datamodule, ckpt_path


class NotALightningModule(MisconfigurationException, TypeError):
    """A Trainer method given something it cannot run (Lightning raises a ``TypeError``)."""


class PredictionsNotReturnable(MisconfigurationException, ProcessRaisedException):
    """``predict(return_predictions=True)`` under a strategy that spawns or forks its processes, which send no
    predictions back. Lightning finds out inside each started process, so its caller gets torch's
    ``ProcessRaisedException``; accelplug refuses before starting any, with both types."""

    def __init__(self, msg: str, error_index: int = 0, error_pid: int = 0) -> None:
        ProcessRaisedException.__init__(self, msg, error_index, error_pid)  # (its pickling passes all three)


class NoModelAttached(MisconfigurationException, AttributeError):
    """``save_checkpoint`` before any call attached a model (Lightning raises an ``AttributeError``)."""


def check_model(model: object, method: str, *names: str) -> torch.nn.Module:
    """``model`` unwrapped from ``torch.compile``, once it has the methods ``trainer.<method>()`` calls.

    A plain ``torch.nn.Module`` with those methods is accepted (accelplug's own welcome); anything else is refused
    with Lightning's ``TypeError`` and its key phrase.
    """
    from ...core.module import LightningModule
    from ...strategies.compiling import unwrap_compiled

    if not isinstance(model, torch.nn.Module):
        raise NotALightningModule(
            f"`model` must be a `LightningModule` or `torch._dynamo.OptimizedModule`, got `{type(model).__qualname__}`"
            f": {method}() needs a torch.nn.Module with training_step/configure_optimizers."
        )
    model = unwrap_compiled(model)
    missing = [n for n in names if not overrides(model, n)]  # the base's defaults (training_step...) do not count
    if missing and not isinstance(model, LightningModule):
        raise NotALightningModule(
            f"`model` must be a `LightningModule`, got `{type(model).__qualname__}`, or a torch.nn.Module with the "
            f"methods trainer.{method}() calls: it has no {', '.join(missing)}() method."
        )
    if missing:
        needs = (
            ". `Trainer.fit` needs at least `training_step()`, `configure_optimizers()` and training data"
            if method == "fit"
            else f" to run `Trainer.{method}`"
        )
        raise MisconfigurationException(
            f"No `{missing[0]}()` method defined{needs}: {type(model).__name__} has no {'(), '.join(missing)}() method."
        )
    return model


def check_manual_options(automatic: bool, accumulate: int, clip_val: float | None) -> None:
    """Options that manual optimization cannot honour, refused before fit sets anything up, as Lightning does."""
    if automatic:
        return
    if clip_val:
        raise MisconfigurationException(
            "Automatic gradient clipping is not supported for manual optimization (automatic_optimization = False): "
            f"remove `Trainer(gradient_clip_val={clip_val})` and call self.clip_gradients(optimizer, "
            "gradient_clip_val=..., gradient_clip_algorithm=...) in training_step, or switch to automatic optimization."
        )
    if accumulate > 1:
        raise MisconfigurationException(
            "Automatic gradient accumulation is not supported for manual optimization (automatic_optimization = "
            f"False): remove `Trainer(accumulate_grad_batches={accumulate})` and accumulate in training_step yourself, "
            "or switch to automatic optimization."
        )


def check_predict_model(model: torch.nn.Module) -> None:
    """Lightning's refusals before ``predict``: a ``predict_step`` set to None, or neither ``predict_step`` nor a
    ``forward`` of the module's own (the default ``predict_step`` calls ``forward``)."""
    if getattr(model, "predict_step", True) is None:
        raise MisconfigurationException(
            f"`predict_step` cannot be None to run `Trainer.predict`: {type(model).__name__}.predict_step is None."
        )
    from ...core.module import LightningModule

    default_step = getattr(type(model), "predict_step", None) in (None, LightningModule.predict_step)
    own_step = "predict_step" in vars(model) or not default_step
    forward = getattr(model, "forward", None)
    own_forward = callable(forward) and getattr(forward, "__func__", None) is not torch.nn.Module.forward
    if not own_step and not own_forward:
        raise MisconfigurationException(
            f"`Trainer.predict` requires `forward` method to run. {type(model).__name__} defines neither "
            "`predict_step()` nor `forward()`."
        )


def warn_fit_validation(model: torch.nn.Module, val_given: bool, datamodule: Any) -> None:
    """Lightning's warnings when fit has a validation step without validation data, or data without a step: the
    validation loop is skipped either way."""
    from ...data.sources import has_loader_source
    from ...distributed.rank_zero import rank_zero_warn
    from ...errors import PossibleUserWarning

    has_loader = val_given or has_loader_source("validate", model, datamodule)
    has_step = overrides(model, "validation_step")
    if has_loader and not has_step:
        rank_zero_warn(
            "You passed in a `val_dataloader` but have no `validation_step`. Skipping val loop: "
            f"{type(model).__name__} defines no validation_step().",
            stacklevel=3,  # the user's fit() call
        )
    elif has_step and not has_loader:
        rank_zero_warn(
            "You defined a `validation_step` but have no `val_dataloader`. Skipping val loop: pass "
            "`val_dataloaders=` to fit() or define val_dataloader() to validate.",
            category=PossibleUserWarning,
            stacklevel=3,
        )


def compile_options_for(model: object, option: dict[str, Any] | None) -> dict[str, Any] | None:
    """The ``torch.compile`` arguments for a fit: the ``compile`` option, or torch's defaults for a module the
    user compiled with ``torch.compile(model)`` before handing it over (its original is trained and compiled in
    place, so its ``state_dict`` keeps the user's keys; the arguments given to torch.compile are not recoverable)."""
    if option is not None or not isinstance(getattr(model, "_orig_mod", None), torch.nn.Module):
        return option
    warnings.warn(
        "fit() got a module compiled with torch.compile(...): accelplug trains its original module and compiles it "
        "in place with torch.compile's default arguments. Pass Trainer(compile=...) with the module itself to "
        "choose them (mode, fullgraph, ...).",
        UserWarning,
        stacklevel=3,
    )
    return {}


def profiler_for(given: Any, options: TrainerOptions) -> Profiler:
    """``trainer.profiler``: the object ``profiler=`` names; refused with ``barebones=True``, as in Lightning."""
    from ...profilers import profiler_from

    if options.barebones and options.profiler is not None:
        raise MisconfigurationException(
            f"`Trainer(barebones=True, profiler={given!r})` was passed. Profiling can impact raw speed so it is "
            "disabled in barebones mode: drop profiler=..., or barebones=True."
        )
    return profiler_from(options.profiler)
