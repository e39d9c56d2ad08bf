"""Upgrading checkpoints written by older Lightning releases to the layout Lightning 2.6 reads.

A Lightning checkpoint records the release that wrote it under :data:`VERSION_KEY`. Each layout change since
0.10 is one upgrade step here, listed in :data:`STEPS` under the release that made the change; a file older than
that release gets the step, in release order. The steps edit the dictionary in place (a checkpoint can be too
large to copy, and may hold objects that cannot be copied), then the file is stamped with
:data:`LIGHTNING_VERSION`, and the release it came from is kept under :data:`LEGACY_VERSION_KEY` (once: the first
release stays recorded through later upgrades). A file from a release newer than :data:`LIGHTNING_VERSION` is
left as it is, with a warning.

The layouts, oldest first:

- before 0.10, ``ModelCheckpoint``'s and ``EarlyStopping``'s state sat at the top level
  (``checkpoint_callback_best_model_score``, ``early_stop_callback_wait``...); it moved under ``callbacks``,
  keyed by the callback's class. The classes live above this room, so the caller hands them in
  (:data:`CallbackHomes`).
- before 1.6, only ``epoch`` and ``global_step`` said where a fit stood; 1.6 added the loops' progress counters
  (``loops.fit_loop``), 1.6.5 the count of batches whose optimizer stepped (``_batches_that_stepped``).
- before 1.9, ``ModelCheckpoint``'s state key named ``save_on_train_epoch_end``; the key no longer does.
- before 2.0, apex's AMP state was saved (apex support is gone), and the fit loop's counters sat under a batch
  loop (removed with truncated back-propagation), an optimizer loop and a manual loop (renamed to the two
  optimisation modes), and the evaluation loops had a dataloader loop around an epoch loop (flattened).

:class:`pl_legacy_patch` is the other half of reading an old file: while it is active, unpickling resolves the
module paths old files name (``pytorch_lightning.*``, ``lightning.pytorch.*``, and the names Lightning has since
removed) to accelplug's objects.
"""

from __future__ import annotations

import pickle
import re
import threading
import warnings
from collections.abc import Callable, Mapping
from enum import Enum
from types import TracebackType
from typing import Any

from .._import_paths import seen_at
from ..distributed.rank_zero import rank_zero_warn
from ..errors import MisconfigurationException, PossibleUserWarning

__all__ = [
    "LEGACY_VERSION_KEY",
    "LIGHTNING_VERSION",
    "STEPS",
    "VERSION_KEY",
    "CallbackHomes",
    "CheckpointKeyError",
    "CheckpointVersionError",
    "pl_legacy_patch",
    "upgrade",
]

#: The Lightning release whose checkpoint layout accelplug writes and upgrades older files to.
LIGHTNING_VERSION = "2.6.6"
#: Where a checkpoint records the Lightning release whose layout it has.
VERSION_KEY = "pytorch-lightning_version"
#: Where an upgraded checkpoint records the release that first wrote it.
LEGACY_VERSION_KEY = "legacy_pytorch-lightning_version"

Checkpoint = dict[str, Any]
#: The callback classes an old top-level key's state belongs to, by Lightning's class name: ``ModelCheckpoint``
#: and ``EarlyStopping``.
CallbackHomes = Mapping[str, type]


class CheckpointKeyError(MisconfigurationException, KeyError):
    """A checkpoint lacks a key that loading or resuming needs: a ``KeyError`` as Lightning's (which names the key,
    or says what it tried to restore), explained."""

    def __str__(self) -> str:  # KeyError quotes its message; this one reads as a sentence
        return str(self.args[0]) if self.args else ""


class CheckpointVersionError(CheckpointKeyError):
    """A dictionary given as a checkpoint records no Lightning release: a ``KeyError`` as Lightning's, naming
    the key that is missing."""


def _release(text: str) -> Any:
    """A release string as something that orders as releases do (``1.6.0rc1`` before ``1.6.0``)."""
    from packaging.version import Version  # lightning-utilities' dependency; loaded only when a file is upgraded

    return Version(text)


def _version(checkpoint: Checkpoint) -> str:
    if VERSION_KEY not in checkpoint:
        raise CheckpointVersionError(
            f"{VERSION_KEY!r}: the checkpoint records no Lightning release (it has the keys "
            f"{sorted(map(str, checkpoint))[:8]}), so which upgrades it needs is unknown. A file Lightning or "
            f"accelplug wrote has it; for a dictionary of your own, set checkpoint[{VERSION_KEY!r}] to the release "
            "whose layout it follows."
        )
    return str(checkpoint[VERSION_KEY])


# ---- the steps, oldest first --------------------------------------------------------------------------------
_TOP_LEVEL_CALLBACK_KEYS = {
    "checkpoint_callback_best_model_score": ("ModelCheckpoint", "best_model_score"),
    "checkpoint_callback_best_model_path": ("ModelCheckpoint", "best_model_path"),
    "checkpoint_callback_best": ("ModelCheckpoint", "best_model_score"),
    "early_stop_callback_wait": ("EarlyStopping", "wait_count"),
    "early_stop_callback_patience": ("EarlyStopping", "patience"),
}


def _migrate_model_checkpoint_early_stopping(checkpoint: Checkpoint, homes: CallbackHomes) -> Checkpoint:
    """0.10: the two callbacks' top-level values move into ``callbacks[<class>]`` under their state names."""
    callbacks = checkpoint["callbacks"] = checkpoint.get("callbacks") or {}
    for old, (class_name, name) in _TOP_LEVEL_CALLBACK_KEYS.items():
        if old in checkpoint:
            home = homes[class_name]
            callbacks[home] = callbacks.get(home) or {}
            callbacks[home][name] = checkpoint.pop(old)
    return checkpoint


def _counts(*names: str) -> dict[str, int]:
    return dict.fromkeys(names, 0)


def _twice(*names: str) -> dict[str, dict[str, int]]:
    """A progress record: the same zero counters for the whole fit (``total``) and the current run of it."""
    return {"current": _counts(*names), "total": _counts(*names)}


def _fresh_fit_loop_1_6() -> dict[str, Any]:
    """The fit loop's record as Lightning 1.6 saved it for a fit that had not started."""
    batch = {**_twice("completed", "processed", "ready", "started"), "is_last_batch": False}
    return {
        "epoch_loop.batch_loop.manual_loop.optim_step_progress": _twice("completed", "ready"),
        "epoch_loop.batch_loop.manual_loop.state_dict": {},
        "epoch_loop.batch_loop.optimizer_loop.optim_progress": {
            "optimizer": {
                "step": _twice("completed", "ready"),
                "zero_grad": _twice("completed", "ready", "started"),
            },
            "optimizer_position": 0,
        },
        "epoch_loop.batch_loop.optimizer_loop.state_dict": {},
        "epoch_loop.batch_loop.state_dict": {},
        "epoch_loop.batch_progress": batch,
        "epoch_loop.scheduler_progress": _twice("completed", "ready"),
        "epoch_loop.state_dict": {"_batches_that_stepped": 0},
        "epoch_loop.val_loop.dataloader_progress": _twice("completed", "ready"),
        "epoch_loop.val_loop.epoch_loop.batch_progress": {
            **_twice("completed", "processed", "ready", "started"),
            "is_last_batch": False,
        },
        "epoch_loop.val_loop.epoch_loop.state_dict": {},
        "epoch_loop.val_loop.state_dict": {},
        "epoch_progress": _twice("completed", "processed", "ready", "started"),
        "state_dict": {},
    }


def _fit_loop_1_6(checkpoint: Checkpoint) -> dict[str, Any]:
    """The file's fit-loop record, a fresh one first where it has none (its own counters win where it has)."""
    loops = checkpoint.setdefault("loops", {"fit_loop": _fresh_fit_loop_1_6()})
    fit_loop: dict[str, Any] = loops.setdefault("fit_loop", _fresh_fit_loop_1_6())
    return fit_loop


def _migrate_loop_global_step_to_progress_tracking(checkpoint: Checkpoint) -> Checkpoint:
    """1.6: ``global_step`` becomes the optimizer steps completed, for both optimisation modes."""
    steps = checkpoint["global_step"]
    fit_loop = _fit_loop_1_6(checkpoint)
    automatic = fit_loop["epoch_loop.batch_loop.optimizer_loop.optim_progress"]
    automatic["optimizer"]["step"]["total"]["completed"] = steps
    fit_loop["epoch_loop.batch_loop.manual_loop.optim_step_progress"]["total"]["completed"] = steps
    return checkpoint


def _migrate_loop_current_epoch_to_progress_tracking(checkpoint: Checkpoint) -> Checkpoint:
    """1.6: ``epoch`` becomes the epochs completed in the current run."""
    _fit_loop_1_6(checkpoint)["epoch_progress"]["current"]["completed"] = checkpoint["epoch"]
    return checkpoint


def _migrate_loop_batches_that_stepped(checkpoint: Checkpoint) -> Checkpoint:
    """1.6.5: the loggers' step counter, where the file has none, is the optimizer steps taken."""
    epoch_loop = checkpoint["loops"]["fit_loop"]["epoch_loop.state_dict"]
    epoch_loop.setdefault("_batches_that_stepped", checkpoint["global_step"])
    return checkpoint


_SAVE_ON_TRAIN_EPOCH_END = re.compile(r", 'save_on_train_epoch_end': (None|True|False)")


def _migrate_model_checkpoint_save_on_train_epoch_end_default(checkpoint: Checkpoint) -> Checkpoint:
    """1.9: ``ModelCheckpoint``'s state key drops ``save_on_train_epoch_end``. Where the new keys would be fewer
    than the old (two states under one key, so which callback owns which cannot be told; or states keyed by their
    class, 0.10's layout, which the new keys do not carry), the keys are left as they are, with a warning, as
    Lightning's step does."""
    if "callbacks" not in checkpoint:
        return checkpoint
    states = checkpoint["callbacks"]
    renamed = {
        (_SAVE_ON_TRAIN_EPOCH_END.sub("", key) if key.startswith("ModelCheckpoint") else key): state
        for key, state in states.items()
        if isinstance(key, str)
    }
    if len(renamed) < len(states):
        rank_zero_warn(
            "This checkpoint has several `ModelCheckpoint` callback states whose state keys would become one"
            " after the upgrade, so which of your checkpoint callbacks owns which state cannot be told. At least"
            " one of your `ModelCheckpoint` callbacks will not be able to reload the state.",
            category=PossibleUserWarning,
        )
        return checkpoint
    checkpoint["callbacks"] = renamed
    return checkpoint


def _drop_apex_amp_state(checkpoint: Checkpoint) -> Checkpoint:
    """2.0: apex's AMP state is dropped (apex support was removed)."""
    if "amp_scaling_state" in checkpoint:
        rank_zero_warn(
            "This checkpoint contains apex AMP data, but apex support has been removed in v2.0.0: the data is"
            " dropped, and the precision starts afresh."
        )
        del checkpoint["amp_scaling_state"]
    return checkpoint


def _fit_loop(checkpoint: Checkpoint) -> dict[str, Any] | None:
    fit_loop: dict[str, Any] | None = checkpoint.get("loops", {}).get("fit_loop")
    return fit_loop


_OUT_OF_BATCH_LOOP = {
    f"epoch_loop.batch_loop.{child}": f"epoch_loop.{child}"
    for child in (
        "manual_loop.optim_step_progress",
        "manual_loop.state_dict",
        "optimizer_loop.optim_progress",
        "optimizer_loop.state_dict",
    )
}


def _migrate_loop_structure_after_tbptt_removal(checkpoint: Checkpoint) -> Checkpoint:
    """2.0: the optimizer and manual loops become children of the epoch loop (the batch loop is gone). The batch
    loop's own state was empty in Lightning's loops; a custom one's is kept aside, under the epoch loop's state
    as ``old_batch_loop_state_dict``, for a user who wants it."""
    fit_loop = _fit_loop(checkpoint)
    if fit_loop is None:
        return checkpoint
    for old, new in _OUT_OF_BATCH_LOOP.items():
        if old in fit_loop:
            fit_loop[new] = fit_loop.pop(old)
    own = fit_loop.pop("epoch_loop.batch_loop.state_dict", None)
    if own:
        fit_loop["epoch_loop.state_dict"]["old_batch_loop_state_dict"] = own
    return checkpoint


def _migrate_loop_structure_after_optimizer_loop_removal(checkpoint: Checkpoint) -> Checkpoint:
    """2.0: one optimizer per automatic step, so no position among optimizers; the optimizer and manual loops are
    now named after the optimisation modes."""
    fit_loop = _fit_loop(checkpoint)
    if fit_loop is None:
        return checkpoint
    if "epoch_loop.optimizer_loop.optim_progress" in fit_loop:
        fit_loop["epoch_loop.optimizer_loop.optim_progress"].pop("optimizer_position", None)
    renames = {
        "optimizer_loop": ("automatic_optimization", "optim_progress"),
        "manual_loop": ("manual_optimization", "optim_step_progress"),
    }
    for old, (new, progress) in renames.items():
        if f"epoch_loop.{old}.state_dict" in fit_loop:
            fit_loop[f"epoch_loop.{new}.state_dict"] = fit_loop.pop(f"epoch_loop.{old}.state_dict")
            fit_loop[f"epoch_loop.{new}.{progress}"] = fit_loop.pop(f"epoch_loop.{old}.{progress}")
    return checkpoint


def _migrate_loop_structure_after_dataloader_loop_removal(checkpoint: Checkpoint) -> Checkpoint:
    """2.0: each evaluation loop loses its dataloader progress, and its epoch loop's entries become its own."""
    loops = checkpoint.get("loops")
    if loops is None:
        return checkpoint
    for name in ("predict_loop", "validate_loop", "test_loop"):
        loop = loops.get(name)
        if loop is None:
            continue
        loop.pop("dataloader_progress", None)
        for key in [k for k in loop if k.startswith("epoch_loop.")]:
            loop[key.removeprefix("epoch_loop.")] = loop.pop(key)
    return checkpoint


Step = Callable[[Checkpoint, CallbackHomes], Checkpoint]


def _without_homes(step: Callable[[Checkpoint], Checkpoint]) -> Step:
    def run(checkpoint: Checkpoint, homes: CallbackHomes) -> Checkpoint:
        return step(checkpoint)

    run.__name__ = step.__name__
    run.__doc__ = step.__doc__
    return run


#: Release -> its steps, in the order they run; releases oldest first. A file older than a release gets its steps.
#: Each step has the name Lightning's migration of the same change has, so the record of what was applied (the
#: second value :func:`upgrade` returns) reads the same as Lightning's.
STEPS: dict[str, list[Step]] = {
    "0.10.0": [_migrate_model_checkpoint_early_stopping],
    "1.6.0": [
        _without_homes(_migrate_loop_global_step_to_progress_tracking),
        _without_homes(_migrate_loop_current_epoch_to_progress_tracking),
    ],
    "1.6.5": [_without_homes(_migrate_loop_batches_that_stepped)],
    "1.9.0": [_without_homes(_migrate_model_checkpoint_save_on_train_epoch_end_default)],
    "2.0.0": [
        _without_homes(_drop_apex_amp_state),
        _without_homes(_migrate_loop_structure_after_tbptt_removal),
        _without_homes(_migrate_loop_structure_after_optimizer_loop_removal),
        _without_homes(_migrate_loop_structure_after_dataloader_loop_removal),
    ],
}


def upgrade(
    checkpoint: Checkpoint, homes: CallbackHomes, target_version: str | None = None
) -> tuple[Checkpoint, dict[str, list[str]]]:
    """Apply, in place, the steps of every release newer than the file's (up to ``target_version`` inclusive,
    where given), stamp the file with :data:`LIGHTNING_VERSION`, and return it with the steps applied by
    release (their names). A file from a newer release is returned unchanged with a warning."""
    written_by = _version(checkpoint)
    # the release stamped: ``lightning.pytorch.__version__``'s value, which code written for Lightning may replace
    current = str(seen_at("accelplug.pytorch", "__version__", LIGHTNING_VERSION))
    if _release(written_by) > _release(current):
        rank_zero_warn(
            f"The loaded checkpoint was produced with Lightning v{written_by}, which is newer than your current"
            f" Lightning version: v{current}. accelplug reads it as it is, without upgrading it.",
            category=PossibleUserWarning,
        )
        return checkpoint, {}
    applied: dict[str, list[str]] = {}
    for release, steps in STEPS.items():
        beyond_target = target_version is not None and _release(release) > _release(target_version)
        if beyond_target or _release(written_by) >= _release(release):
            continue
        for step in steps:
            checkpoint = step(checkpoint, homes)
        applied[release] = [step.__name__ for step in steps]
    if written_by != current:
        checkpoint.setdefault(LEGACY_VERSION_KEY, written_by)
    checkpoint[VERSION_KEY] = current
    return checkpoint, applied


# ---- reading old pickles ------------------------------------------------------------------------------------
class _FaultTolerantMode(str, Enum):
    """Stand-in for an enum Lightning removed in 2.0 that older files pickled."""

    DISABLED = "disabled"
    AUTOMATIC = "automatic"
    MANUAL = "manual"


def _gpus_arg_default(value: Any) -> Any:
    """Stand-in for the argparse helper files before 1.2.8 pickled (it returned its argument)."""
    return value


#: (module, name) an old file pickled -> the object it stands for now.
_REMOVED: dict[tuple[str, str], Any] = {
    ("utilities.argparse_utils", "_gpus_arg_default"): _gpus_arg_default,
    ("utilities.argparse", "_gpus_arg_default"): _gpus_arg_default,
    ("utilities.enums", "_FaultTolerantMode"): _FaultTolerantMode,
}
_OLD_PACKAGES = {
    "pytorch_lightning": "accelplug.pytorch",
    "lightning.pytorch": "accelplug.pytorch",
    "lightning_fabric": "accelplug.fabric",
    "lightning.fabric": "accelplug.fabric",
}


def _now_at(module: str) -> str:
    """The accelplug module an old Lightning module path stands for (other paths unchanged)."""
    for old, new in _OLD_PACKAGES.items():
        if module == old or module.startswith(f"{old}."):
            return new + module[len(old) :]
    return module


class _RedirectingUnpickler(pickle.Unpickler):
    """Finds each class an old file names at the path it has in accelplug now; a name accelplug has no
    counterpart for is looked up where the file says (an installed Lightning's, if any)."""

    def find_class(self, module: str, name: str) -> Any:
        now = _now_at(module)
        if now == module:
            return super().find_class(module, name)
        removed = _REMOVED.get((now.removeprefix("accelplug.pytorch."), name))
        if removed is not None:
            return removed
        try:
            found = super().find_class(now, name)
        except (ImportError, AttributeError):
            return super().find_class(module, name)
        warnings.warn(f"Redirecting import of {module}.{name} to {now}.{name}", stacklevel=2)
        return found


_patching = threading.RLock()


class pl_legacy_patch:
    """While active, unpickling (``torch.load(..., weights_only=False)``) reads files older Lightning releases
    wrote: classes pickled under ``pytorch_lightning.*`` or ``lightning.pytorch.*`` (callbacks, ``AttributeDict``
    hyper-parameters) are found at accelplug's paths, and objects Lightning has removed since
    (``_FaultTolerantMode``, ``argparse_utils._gpus_arg_default``) come as stand-ins. Use it as a context manager;
    one thread at a time (the unpickler is swapped process-wide while it is active)::

        with pl_legacy_patch():
            checkpoint = torch.load("old.ckpt", weights_only=False)
    """

    def __enter__(self) -> pl_legacy_patch:
        _patching.acquire()
        self._previous = pickle.Unpickler
        pickle.Unpickler = _RedirectingUnpickler  # type: ignore[misc]  # torch.load subclasses pickle.Unpickler
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        pickle.Unpickler = self._previous  # type: ignore[misc]
        _patching.release()
