"""The Trainer's options: Lightning 2.x's names with Lightning's meanings, validated once at the edge.

Each option has one checker that either returns the normalised value or a phrase saying what is
accepted; all problems of one call become one ``MisconfigurationException`` naming each option and
the value given. An unknown keyword is named with the closest option. Inside the package the result
is a frozen :class:`TrainerOptions` of plain values.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ...errors import MisconfigurationException, did_you_mean
from . import checks

__all__ = ["ACCEPTED", "TrainerOptions", "validate_options"]


#: option -> (checker, what is accepted, in words).
_CHECKS: dict[str, tuple[Callable[[Any], Any], str]] = {
    "max_epochs": (
        lambda v: checks.int_at_least(v, 0, allow_none=True, extra=(-1,)),
        "an int >= 0, -1 for no epoch limit, or None (1000 epochs unless max_steps stops earlier)",
    ),
    "min_epochs": (lambda v: checks.int_at_least(v, 0, allow_none=True), "an int >= 0, or None"),
    "max_steps": (
        lambda v: checks.int_at_least(v, 1, allow_none=True, extra=(-1,)),
        "an int >= 1, or -1/None for no step limit",
    ),
    "min_steps": (lambda v: checks.int_at_least(v, 0, allow_none=True), "an int >= 0, or None"),
    "max_time": (
        checks.max_time_seconds,
        "'DD:HH:MM:SS' (e.g. '00:12:00:00'), a datetime.timedelta, or a dict such as {'hours': 12}; positive",
    ),
    "accumulate_grad_batches": (lambda v: checks.int_at_least(v, 1), "an int >= 1"),
    "gradient_clip_val": (checks.number, "a number >= 0, or None for no clipping"),
    "gradient_clip_algorithm": (
        lambda v: "norm" if v is None else checks.choice(v, ("norm", "value")),
        "'norm' or 'value'",
    ),
    "val_check_interval": (
        checks.val_check_interval,
        "a float in (0, 1] (fraction of an epoch), an int >= 1 (every N batches), or None",
    ),
    "check_val_every_n_epoch": (lambda v: checks.int_at_least(v, 1, allow_none=True), "an int >= 1, or None"),
    "limit_train_batches": (checks.fraction_or_count, "a float in [0, 1] (fraction of the batches) or an int >= 0"),
    "limit_val_batches": (checks.fraction_or_count, "a float in [0, 1] (fraction of the batches) or an int >= 0"),
    "limit_test_batches": (checks.fraction_or_count, "a float in [0, 1] (fraction of the batches) or an int >= 0"),
    "limit_predict_batches": (checks.fraction_or_count, "a float in [0, 1] (fraction of the batches) or an int >= 0"),
    "overfit_batches": (
        lambda v: 0.0 if v is None else checks.fraction_or_count(v),
        "a float in [0, 1] or an int >= 0 (0: off)",
    ),
    "num_sanity_val_steps": (
        lambda v: 2 if v is None else checks.int_at_least(v, 0, extra=(-1,)),
        "an int >= 0, or -1 for all",
    ),
    "log_every_n_steps": (lambda v: 50 if v is None else checks.int_at_least(v, 1), "an int >= 1"),
    "default_root_dir": (checks.root_dir, "a folder path (str or Path), or None for the current directory"),
    "seed": (checks.seed_value, "an int in [0, 2**32 - 1], or None to leave the random generators alone"),
    "callbacks": (checks.callback_list, "a list of callback objects (or one), or None"),
    "enable_progress_bar": (lambda v: checks.boolean(v, True), "True or False"),
    "enable_checkpointing": (lambda v: checks.boolean(v, True), "True or False"),
    "enable_model_summary": (lambda v: checks.boolean(v, True), "True or False"),
    "logger": (
        checks.logger_spec,
        "True/'csv' (metrics.csv), 'tensorboard' (CSV and TensorBoard), False, or logger object(s) with "
        "log_metrics() (e.g. accelplug.CSVLogger, a Lightning logger)",
    ),
    "mps_fallback": (checks.boolean, "True or False"),
    "num_nodes": (lambda v: checks.int_at_least(v, 1), "an int >= 1"),
    "fast_dev_run": (checks.fast_dev_run, "True/False or an int >= 0 (number of batches)"),
    "deterministic": (checks.deterministic, "True, False, 'warn', or None"),
    "benchmark": (lambda v: None if v is None else checks.boolean(v), "True, False, or None"),
    "inference_mode": (checks.boolean, "True or False"),
    "use_distributed_sampler": (checks.boolean, "True or False"),
    "detect_anomaly": (checks.boolean, "True or False"),
    "reload_dataloaders_every_n_epochs": (lambda v: checks.int_at_least(v, 0), "an int >= 0 (0: never)"),
    "barebones": (checks.boolean, "True or False"),
    "sync_batchnorm": (checks.boolean, "True or False"),
    "enable_autolog_hparams": (checks.boolean, "True or False"),
    "compile": (checks.compile_spec, "False, True, a torch.compile mode name, or a dict of torch.compile arguments"),
    "nonfinite_loss": (
        lambda v: checks.choice(v, ("warn", "stop", "raise", "ignore")),
        "'warn' (default), 'stop' (end fit cleanly), 'raise' (FloatingPointError) or 'ignore'",
    ),
    "profiler": (
        checks.only_none,
        "None: accelplug has no profiler option; wrap trainer.fit() in torch.profiler.profile(...) instead",
    ),
    "plugins": (checks.only_none, "None: use precision=... and strategy=... (or a plugin distribution) instead"),
    "model_registry": (checks.only_none, "None: accelplug has no model registry"),
}

ACCEPTED: dict[str, str] = {name: text for name, (_, text) in _CHECKS.items()}


@dataclass(frozen=True)
class TrainerOptions:
    max_epochs: int | None = None
    min_epochs: int | None = None
    max_steps: int | None = -1
    min_steps: int | None = None
    max_time: float | None = None
    accumulate_grad_batches: int = 1
    gradient_clip_val: float | None = None
    gradient_clip_algorithm: str = "norm"
    val_check_interval: float | int | None = None
    check_val_every_n_epoch: int | None = 1
    limit_train_batches: float | int = 1.0
    limit_val_batches: float | int = 1.0
    limit_test_batches: float | int = 1.0
    limit_predict_batches: float | int = 1.0
    overfit_batches: float | int = 0.0
    num_sanity_val_steps: int = 2
    log_every_n_steps: int = 50
    default_root_dir: str | os.PathLike[str] | None = None
    seed: int | None = None
    callbacks: list[Any] = field(default_factory=list)
    enable_progress_bar: bool = True
    enable_checkpointing: bool = True
    enable_model_summary: bool = True
    logger: Any = True
    mps_fallback: bool = False
    num_nodes: int = 1
    fast_dev_run: int = 0
    deterministic: bool | str | None = None
    benchmark: bool | None = None
    inference_mode: bool = True
    use_distributed_sampler: bool = True
    detect_anomaly: bool = False
    reload_dataloaders_every_n_epochs: int = 0
    barebones: bool = False
    sync_batchnorm: bool = False
    enable_autolog_hparams: bool = True
    compile: dict[str, Any] | None = None
    nonfinite_loss: str = "warn"
    profiler: None = None
    plugins: None = None
    model_registry: None = None

    @property
    def max_time_seconds(self) -> float | None:
        return self.max_time

    @property
    def root_dir(self) -> Path:
        root = self.default_root_dir
        return Path(root).expanduser() if root is not None else Path.cwd()


_FIELDS = tuple(f.name for f in fields(TrainerOptions))
assert set(_FIELDS) == set(_CHECKS), set(_FIELDS) ^ set(_CHECKS)

#: Names that are Trainer arguments but not loop options (checked by the selection rules).
SELECTION_ARGUMENTS = ("accelerator", "devices", "strategy", "precision")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def validate_options(**given: Any) -> TrainerOptions:
    """A :class:`TrainerOptions` from the Trainer's keyword arguments, or one clear error for all problems."""
    problems: list[str] = []
    values: dict[str, Any] = {}
    for name, value in given.items():
        if name not in _CHECKS:
            known = [*_CHECKS, *SELECTION_ARGUMENTS]
            problems.append(
                f"Trainer got an unknown argument {name!r}.{did_you_mean(name, known)} "
                f"Accepted: {', '.join(sorted(known))}"
            )
            continue
        check, accepted = _CHECKS[name]
        try:
            values[name] = check(value)
        except checks.Bad as exc:
            detail = f" ({exc})" if str(exc) else ""
            problems.append(f"{name}={_shown(value)} is invalid{detail}: expected {accepted}")
    if problems:
        raise MisconfigurationException("; ".join(dict.fromkeys(problems)) + ".")
    options = TrainerOptions(**values)
    return _apply_shortcuts(options)


def _apply_shortcuts(options: TrainerOptions) -> TrainerOptions:
    """``fast_dev_run``, ``overfit_batches`` and ``barebones`` set other options, as in Lightning."""
    from dataclasses import replace

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
            logger=False,
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
