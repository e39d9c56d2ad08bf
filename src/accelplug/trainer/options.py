"""The Trainer's loop options, validated once at the edge.

pydantic checks each option's type and range; every problem becomes one
``MisconfigurationException`` naming the option, the value given, and what is accepted, so a user
never meets a ``TypeError`` from deep inside the loop. Inside the package the result is a frozen
:class:`TrainerOptions` of plain values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, ValidationError

from ..errors import MisconfigurationException

__all__ = ["ACCEPTED", "TrainerOptions", "validate_options"]

#: What each option accepts, in words (used in error messages and the docs).
ACCEPTED: dict[str, str] = {
    "max_epochs": "an int >= 0, or None (1000 epochs unless max_steps stops earlier)",
    "max_steps": "an int >= 1, or -1/None for no step limit",
    "accumulate_grad_batches": "an int >= 1",
    "gradient_clip_val": "a number >= 0, or None for no clipping",
    "gradient_clip_algorithm": "'norm' or 'value'",
    "val_check_interval": "a float in (0, 1] (fraction of an epoch), an int >= 1 (every N batches), or None",
    "check_val_every_n_epoch": "an int >= 1",
    "limit_train_batches": "a float in [0, 1] (fraction of the batches) or an int >= 0 (number of batches)",
    "limit_val_batches": "a float in [0, 1] (fraction of the batches) or an int >= 0 (number of batches)",
    "log_every_n_steps": "an int >= 1",
    "default_root_dir": "a folder path (str or Path), or None for the current directory",
    "seed": "an int in [0, 2**32 - 1], or None to leave the random generators alone",
    "callbacks": "a list of callback objects (or one), or None",
    "enable_progress_bar": "True or False",
    "enable_checkpointing": "True or False",
    "logger": "True/'csv' (metrics.csv), 'tensorboard' (CSV and TensorBoard), or False",
    "mps_fallback": "True or False",
    "num_nodes": "an int >= 1",
}


class TrainerOptions(BaseModel):
    model_config = ConfigDict(frozen=True, strict=True, extra="forbid", arbitrary_types_allowed=True)

    max_epochs: StrictInt | None = Field(default=None, ge=0)
    max_steps: StrictInt | None = Field(default=-1, ge=-1)
    accumulate_grad_batches: StrictInt = Field(default=1, ge=1)
    gradient_clip_val: Union[StrictInt, StrictFloat, None] = Field(default=None, ge=0)  # noqa: UP007
    gradient_clip_algorithm: Literal["norm", "value"] = "norm"
    val_check_interval: Union[StrictInt, StrictFloat, None] = Field(default=None, gt=0)  # noqa: UP007
    check_val_every_n_epoch: StrictInt = Field(default=1, ge=1)
    limit_train_batches: Union[StrictInt, StrictFloat] = Field(default=1.0, ge=0)  # noqa: UP007
    limit_val_batches: Union[StrictInt, StrictFloat] = Field(default=1.0, ge=0)  # noqa: UP007
    log_every_n_steps: StrictInt = Field(default=50, ge=1)
    default_root_dir: Union[str, Path, None] = None  # noqa: UP007
    seed: StrictInt | None = Field(default=None, ge=0, le=2**32 - 1)
    callbacks: list[Any] | None = None
    enable_progress_bar: StrictBool = True
    enable_checkpointing: StrictBool = True
    logger: Union[StrictBool, Literal["csv", "tensorboard"]] = True  # noqa: UP007
    mps_fallback: StrictBool = False
    num_nodes: StrictInt = Field(default=1, ge=1)


def _range_problems(options: TrainerOptions) -> list[str]:
    """Checks pydantic's field constraints cannot express (floats meaning fractions, max_steps=0)."""
    problems = []
    if options.max_steps == 0:
        problems.append("max_steps=0")
    for name in ("limit_train_batches", "limit_val_batches"):
        value = getattr(options, name)
        if isinstance(value, float) and value > 1.0:
            problems.append(f"{name}={value!r}")
    value = options.val_check_interval
    if isinstance(value, float) and value > 1.0:
        problems.append(f"val_check_interval={value!r}")
    return problems


def validate_options(**given: Any) -> TrainerOptions:
    """A :class:`TrainerOptions` from the Trainer's keyword arguments, or one clear error for all problems."""
    callbacks = given.get("callbacks")
    if callbacks is not None and not isinstance(callbacks, (list, tuple)):
        given["callbacks"] = [callbacks]
    elif isinstance(callbacks, tuple):
        given["callbacks"] = list(callbacks)
    for callback in given.get("callbacks") or []:
        if isinstance(callback, (str, bytes, int, float)):
            raise MisconfigurationException(f"callbacks contains {callback!r}; expected {ACCEPTED['callbacks']}.")
    try:
        options = TrainerOptions(**given)
    except ValidationError as exc:
        messages = []
        for error in exc.errors():
            name = str(error["loc"][0]) if error["loc"] else "argument"
            if name not in ACCEPTED:
                messages.append(f"Trainer got an unknown argument {name!r}; accepted: {', '.join(sorted(ACCEPTED))}")
                continue
            messages.append(f"{name}={given.get(name)!r} is invalid: expected {ACCEPTED[name]}")
        raise MisconfigurationException("; ".join(dict.fromkeys(messages)) + ".") from None
    problems = _range_problems(options)
    if problems:
        raise MisconfigurationException(
            "; ".join(f"{p} is invalid: expected {ACCEPTED[p.split('=', 1)[0]]}" for p in problems) + "."
        )
    return options
