"""The Trainer's options, each declared once: Lightning 2.x's name and default, its check, what it accepts.

One :func:`option` entry per field of :class:`TrainerOptions` holds everything about that option: the
default as the Trainer's signature writes it (Lightning's, e.g. ``log_every_n_steps=None``), the
checker that turns a value into the one the loops use (or raises :class:`.checks.Bad`), and what is
accepted, in words. The dataclass default is the checker applied to the Trainer's default, so a default
is written once; the error text comes from the same entry; and a test holds the Trainer's signature to
these entries. All problems of one call become one ``MisconfigurationException`` naming each option and
the value given; an unknown keyword is named with the closest option.
"""

from __future__ import annotations

import datetime
import logging
import os
from collections.abc import Callable
from dataclasses import field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._record import record
from ...errors import MisconfigurationException, did_you_mean
from . import checks

if TYPE_CHECKING:
    from ...selection import RunPlugins

__all__ = [
    "SELECTION_ARGUMENTS",
    "OptionEntry",
    "OptionTypeError",
    "TrainerOptions",
    "announce_limits",
    "entries",
    "option",
    "validate_options",
]


@record(frozen=True)
class OptionEntry:
    """One option's declaration, as :func:`entries` returns it."""

    name: str
    #: The default of the Trainer's argument (what a user who passes nothing gives).
    given: Any
    check: Callable[[Any], Any]
    #: What is accepted, in words: the end of the error message.
    accepted: str


def option(given: Any, check: Callable[[Any], Any], accepted: str) -> Any:
    """A field of :class:`TrainerOptions`: its default is ``check(given)``, computed, never written twice."""
    value = check(given)
    meta = {"given": given, "check": check, "accepted": accepted}
    if isinstance(value, (list, dict, set)):  # a fresh one for every TrainerOptions
        return field(default_factory=lambda: check(given), metadata=meta)
    return field(default=value, metadata=meta)


#: Lightning's logging cadence when ``log_every_n_steps`` is left at None (the loop reads step values back as often).
DEFAULT_LOG_EVERY_N_STEPS = 50

_BOOL = (checks.boolean, "True or False")
_ON = (lambda v: checks.boolean(v, True), "True or False")
_LIMIT = (checks.fraction_or_count, "a float in [0, 1] (fraction of the batches) or an int >= 0")
_NONE_OR_INT = "an int >= 0, or None"


@record(frozen=True)
class TrainerOptions:
    """The Trainer's options, checked and normalised (``trainer.options``); built by :func:`validate_options`."""

    max_epochs: int | None = option(
        None,
        lambda v: checks.loop_limit(v, "max_epochs", ""),
        "an int >= 0, -1 for no epoch limit, or None (1000 epochs unless max_steps stops earlier)",
    )
    min_epochs: int | None = option(None, lambda v: checks.int_at_least(v, 0, allow_none=True), _NONE_OR_INT)
    max_steps: int | None = option(
        -1,
        lambda v: checks.loop_limit(v, "max_steps", " (infinite steps)"),
        "an int >= 0 (0: train nothing), or -1/None for no step limit",
    )
    min_steps: int | None = option(None, lambda v: checks.int_at_least(v, 0, allow_none=True), _NONE_OR_INT)
    max_time: float | None = option(
        None,
        checks.max_time_seconds,
        "'DD:HH:MM:SS' (e.g. '00:12:00:00'), a datetime.timedelta, or a dict such as {'hours': 12}; positive",
    )
    accumulate_grad_batches: int = option(1, lambda v: checks.int_at_least(v, 1), "an int >= 1")
    gradient_clip_val: float | None = option(None, checks.clip_value, "a number >= 0, or None for no clipping")
    gradient_clip_algorithm: str = option(None, checks.clip_algorithm, "'norm' or 'value' (any case, as in Lightning)")
    val_check_interval: float | int | datetime.timedelta | None = option(
        None,
        checks.val_check_interval,
        "a float in [0, 1] (fraction of an epoch), an int >= 1 (every N batches), a duration ('DD:HH:MM:SS', a "
        "datetime.timedelta or a dict such as {'minutes': 5}: every that much training time), or None",
    )
    check_val_every_n_epoch: int | None = option(1, checks.every_n_epochs, "an int >= 1, or None")
    limit_train_batches: float | int = option(None, *_LIMIT)
    limit_val_batches: float | int = option(None, *_LIMIT)
    limit_test_batches: float | int = option(None, *_LIMIT)
    limit_predict_batches: float | int = option(None, *_LIMIT)
    overfit_batches: float | int = option(
        0.0, lambda v: 0.0 if v is None else checks.fraction_or_count(v), "a float in [0, 1] or an int >= 0 (0: off)"
    )
    num_sanity_val_steps: int = option(
        None, lambda v: 2 if v is None else checks.int_at_least(v, 0, extra=(-1,)), "an int >= 0, or -1 for all"
    )
    log_every_n_steps: int = option(
        None,
        lambda v: DEFAULT_LOG_EVERY_N_STEPS if v is None else checks.int_at_least(v, 0),
        "an int >= 0 (0: no training step is logged)",
    )
    default_root_dir: str | os.PathLike[str] | None = option(
        None, checks.root_dir, "a folder path (str or Path), or None for the current directory"
    )
    seed: int | None = option(
        None, checks.seed_value, "an int in [0, 2**32 - 1], or None to leave the random generators alone"
    )
    callbacks: list[Any] = option(None, checks.callback_list, "a list of callback objects (or one), or None")
    enable_progress_bar: bool = option(None, *_ON)
    enable_checkpointing: bool = option(None, *_ON)
    enable_model_summary: bool = option(None, *_ON)
    logger: Any = option(
        None,
        checks.logger_spec,
        "True (TensorBoardLogger when tensorboard is installed, else CSVLogger), 'csv', 'tensorboard' (CSV and "
        "TensorBoard), False or [] (none), or logger object(s) with log_metrics() (e.g. accelplug.CSVLogger, a "
        "Lightning logger)",
    )
    mps_fallback: bool = option(False, *_BOOL)
    num_nodes: int = option(1, lambda v: checks.int_at_least(v, 1), "an int >= 1")
    fast_dev_run: int = option(
        False, checks.fast_dev_run, "True/False or an int (a number of batches); it should be >= 0"
    )
    deterministic: bool | str | None = option(None, checks.deterministic, "True, False, 'warn', or None")
    benchmark: bool | None = option(None, lambda v: None if v is None else checks.boolean(v), "True, False, or None")
    inference_mode: bool = option(True, *_BOOL)
    use_distributed_sampler: bool = option(True, *_BOOL)
    detect_anomaly: bool = option(False, *_BOOL)
    reload_dataloaders_every_n_epochs: int = option(
        0, checks.reload_every, "0 (never reload) or a number of epochs between reloads"
    )
    barebones: bool = option(False, *_BOOL)
    sync_batchnorm: bool = option(False, *_BOOL)
    enable_autolog_hparams: bool = option(True, *_BOOL)
    compile: dict[str, Any] | None = option(
        False, checks.compile_spec, "False, True, a torch.compile mode name, or a dict of torch.compile arguments"
    )
    nonfinite_loss: str = option(
        "warn",
        lambda v: checks.choice(v, ("warn", "stop", "raise", "ignore")),
        "'warn' (default), 'stop' (end fit cleanly), 'raise' (FloatingPointError) or 'ignore'",
    )
    profiler: Any = option(
        None,
        checks.profiler,
        "None, 'simple', 'advanced', 'pytorch' or a Profiler object (accelplug.profilers.SimpleProfiler(...), ...)",
    )
    plugins: RunPlugins = option(
        None,
        checks.plugins,
        "None, or a list of plugin objects, at most one of each kind: a ClusterEnvironment (SLURMEnvironment(), "
        "...), a Precision (MixedPrecision('bf16-mixed', 'cpu'), ...), a LayerSync (TorchSyncBatchNorm()), a "
        "CheckpointIO (AsyncCheckpointIO(), ...)",
    )
    model_registry: None = option(None, checks.only_none, "None: accelplug has no model registry")

    @property
    def max_time_seconds(self) -> float | None:
        return self.max_time

    @property
    def root_dir(self) -> Path:
        root = self.default_root_dir
        return Path(os.path.expanduser(root)) if root is not None else Path.cwd()


def entries() -> dict[str, OptionEntry]:
    """Every option's declaration, by name, in the order of :class:`TrainerOptions`."""
    return {
        f.name: OptionEntry(
            name=f.name, given=f.metadata["given"], check=f.metadata["check"], accepted=f.metadata["accepted"]
        )
        for f in fields(TrainerOptions)
    }


_ENTRIES = entries()

#: Names that are Trainer arguments but not loop options (checked by the selection rules).
SELECTION_ARGUMENTS = ("accelerator", "devices", "strategy", "precision")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def validate_options(**given: Any) -> TrainerOptions:
    """A :class:`TrainerOptions` from the Trainer's keyword arguments, or one clear error for all problems."""
    problems: list[str] = []
    values: dict[str, Any] = {}
    error: type[MisconfigurationException] = MisconfigurationException
    for name, value in given.items():
        entry = _ENTRIES.get(name)
        if entry is None:
            known = [*_ENTRIES, *SELECTION_ARGUMENTS]
            problems.append(
                f"Trainer.__init__() got an unexpected keyword argument {name!r}.{did_you_mean(name, known)} "
                f"Accepted: {', '.join(sorted(known))}"
            )
            error = OptionTypeError  # Python's (and Lightning's) TypeError for an unknown keyword
            continue
        try:
            values[name] = entry.check(value)
        except checks.Bad as exc:
            detail = f" ({exc})" if str(exc) else ""
            if exc.type_error:
                error = OptionTypeError
            problems.append(f"{name}={_shown(value)} is invalid{detail}: expected {entry.accepted}")
    problems += _contradictions(values)
    if problems:
        raise error("; ".join(dict.fromkeys(problems)) + ".")
    if values.get("barebones"):
        _check_barebones(given)
    return _apply_shortcuts(TrainerOptions(**values))


class OptionTypeError(MisconfigurationException, TypeError):
    """An option given a wrong kind of value where Lightning raises a ``TypeError`` (``gradient_clip_val=(1, 2)``)."""


class BarebonesConflict(MisconfigurationException, ValueError):
    """An option ``barebones=True`` turns off, asked for anyway (Lightning raises a ``ValueError``)."""


#: What ``barebones=True`` turns off, and why each would cost speed: an option given a value that turns it on is
#: refused, as Lightning refuses it.
_BAREBONES_OFF = {
    "enable_checkpointing": "Checkpointing can impact raw speed",
    "logger": "Logging can impact raw speed",
    "enable_progress_bar": "The progress bar can impact raw speed",
    "log_every_n_steps": "Logging can impact raw speed",
    "enable_model_summary": "Model summary can impact raw speed",
    "num_sanity_val_steps": "Sanity checking can impact raw speed",
    "fast_dev_run": "A development run is not meant for raw speed evaluation",
    "detect_anomaly": "Anomaly detection can impact raw speed",
    "profiler": "Profiling can impact raw speed",
}


def _check_barebones(given: dict[str, Any]) -> None:
    """Refuse what ``barebones=True`` turns off; say what it turned off (Lightning's message, at INFO level)."""
    for name, why in _BAREBONES_OFF.items():
        value = given.get(name)
        if value is None or value is False or (name in ("log_every_n_steps", "num_sanity_val_steps") and value == 0):
            continue
        raise BarebonesConflict(
            f"`Trainer(barebones=True, {name}={value!r})` was passed. {why}, so barebones mode turns it off: "
            f"drop {name}=..., or barebones=True."
        )
    logging.getLogger(__name__).info(
        "You are running in `Trainer(barebones=True)` mode: checkpointing, loggers, the progress bar, the model "
        "summary, the sanity check, development runs, anomaly detection and profiling are off, so that the "
        "Trainer's own overhead can be measured."
    )


def _contradictions(values: dict[str, Any]) -> list[str]:
    """Options each valid alone that Lightning refuses together, in its words."""
    interval = values.get("val_check_interval")
    if values.get("check_val_every_n_epoch", 1) is None and isinstance(interval, float):
        return [
            f"val_check_interval={interval} is a fraction of an epoch, but with check_val_every_n_epoch=None it counts "
            "training batches across epochs: `val_check_interval` should be an integer or a time-based duration "
            "(str 'DD:HH:MM:SS', datetime.timedelta, or dict kwargs for timedelta) when `check_val_every_n_epoch=None`."
            " Keep check_val_every_n_epoch (1: every epoch) for a fraction"
        ]
    return []


_ONE = {
    "limit_train_batches": ("1 batch per epoch will be used.", "100% of the batches per epoch will be used"),
    "val_check_interval": (
        "validation will run after every batch.",
        "validation will run at the end of the training epoch",
    ),
}


def announce_limits(given: dict[str, Any]) -> None:
    """Lightning's INFO lines for a limit of exactly one batch (``1``) or the whole epoch (``1.0``), which read
    alike but mean different things, and for ``fast_dev_run``; on the ``accelplug.trainer`` logger (global zero),
    after the device lines, as Lightning's Trainer writes them."""
    import logging

    from ...distributed.rank_zero import is_rank_zero

    if not is_rank_zero():
        return
    log = logging.getLogger("accelplug.trainer")
    fast = given.get("fast_dev_run")
    limits = ("limit_train_batches", "limit_val_batches", "limit_test_batches", "limit_predict_batches")
    overfit = given.get("overfit_batches") or 0
    names = [] if fast else [n for n in limits if not overfit or n not in limits[:2]] + ["val_check_interval"]
    for name in ["overfit_batches", *names]:
        value = given.get(name)
        one, whole = _ONE.get(name, ("1 batch will be used.", "100% of the batches will be used"))
        if type(value) is int and value == 1:
            log.info("`Trainer(%s=1)` was configured so %s", name, one)
        elif type(value) is float and value == 1.0:
            log.info("`Trainer(%s=1.0)` was configured so %s.", name, whole)
    if fast:
        log.info(
            "Running in `fast_dev_run` mode: will run the requested loop using %d batch(es). Logging and "
            "checkpointing is suppressed.",
            int(fast),
        )


def _apply_shortcuts(options: TrainerOptions) -> TrainerOptions:
    """``fast_dev_run``, ``overfit_batches`` and ``barebones`` set other options, as in Lightning."""
    from ...loggers.logger import DummyLogger

    if options.fast_dev_run:
        n = options.fast_dev_run
        options = replace(
            options,
            max_epochs=1,
            max_steps=n,
            limit_train_batches=n,
            limit_val_batches=n,
            limit_test_batches=n,
            limit_predict_batches=n,
            num_sanity_val_steps=0,
            val_check_interval=None,
            check_val_every_n_epoch=1,
            # Lightning's rule: a DummyLogger stands for the configured loggers, so `self.logger.experiment`
            # still works in user code, and nothing is written
            logger=[DummyLogger()] if options.logger not in (False, []) else False,
            enable_checkpointing=False,
        )
    if options.overfit_batches:
        overfit = options.overfit_batches
        options = replace(options, limit_train_batches=overfit, limit_val_batches=overfit)
    if options.barebones:
        options = replace(
            options,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            num_sanity_val_steps=0,
        )
    return options
