"""One checker per Trainer option: the normalised value, or :class:`Bad` when it is not acceptable.

Plain functions rather than a pydantic model: building and validating a pydantic model here cost
about 140 ms of every ``Trainer()``'s start-up (``benchmarks/import_time.py``), for checks that are
one line each. :mod:`.entries` pairs each with the words that say what is accepted.
"""

from __future__ import annotations

import datetime
import math
import os
from collections.abc import Mapping
from typing import Any

from ...errors import MisconfigurationException


class Bad(Exception):
    """Raised by a checker: the argument is what is accepted, in words.

    ``type_error``: Lightning refuses this value with a ``TypeError`` (a wrong kind of value, not a wrong value),
    so the Trainer's error is one too.
    """

    def __init__(self, detail: str = "", *, type_error: bool = False) -> None:
        super().__init__(detail)
        self.type_error = type_error


def int_at_least(value: Any, minimum: int, allow_none: bool = False, extra: tuple[int, ...] = ()) -> Any:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or (value < minimum and value not in extra):
        raise Bad
    return value


def loop_limit(value: Any, name: str, minus_one: str) -> Any:
    """``max_epochs``/``max_steps``: an int >= 0 (0 trains nothing, as in Lightning), -1 (no limit) or None;
    refused with Lightning's key phrase."""
    try:
        return int_at_least(value, 0, allow_none=True, extra=(-1,))
    except Bad:
        raise Bad(f"`{name}` must be a non-negative integer or -1{minus_one}") from None


def reload_every(value: Any) -> Any:
    """``reload_dataloaders_every_n_epochs``: refused in Lightning's words ("should be an int >= 0")."""
    try:
        return int_at_least(value, 0)
    except Bad:
        raise Bad("it should be an int >= 0") from None


#: Lightning's key phrase for a batch limit that is neither a fraction nor a whole number of batches.
_INVALID_LIMIT = "passed invalid value: neither a fraction in [0, 1] nor a whole number of batches"


def fraction_or_count(value: Any) -> Any:
    """A float in [0, 1] (a fraction of the batches) or an int >= 0 (a number of batches); a whole float above 1
    (``2.0``, ``1e50``) is that many batches, as in Lightning."""
    if value is None:
        return 1.0
    if isinstance(value, bool):
        raise Bad
    if isinstance(value, int):
        if value < 0:
            raise Bad(_INVALID_LIMIT)
        return value
    if isinstance(value, float) and 0.0 <= value <= 1.0:
        return value
    if isinstance(value, float) and value > 1.0 and math.isfinite(value) and value.is_integer():
        return int(value)
    raise Bad(_INVALID_LIMIT)


def boolean(value: Any, default: bool | None = None) -> bool:
    if value is None and default is not None:
        return default
    if not isinstance(value, bool):
        raise Bad
    return value


def number(value: Any, minimum: float = 0.0) -> Any:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < minimum:
        raise Bad
    return value


def clip_value(value: Any) -> Any:
    """``gradient_clip_val``: a number >= 0 or None; another kind of value is a TypeError in Lightning."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise Bad(f"`gradient_clip_val` should be an int or a float. Got {value}", type_error=True)
    return number(value)


def clip_algorithm(value: Any) -> str:
    """``gradient_clip_algorithm``: 'norm' (also for None) or 'value', in any case, as Lightning takes it."""
    if value is None:
        return "norm"
    try:
        return str(choice(value.lower() if isinstance(value, str) else value, ("norm", "value")))
    except Bad:
        raise Bad(f"`gradient_clip_algorithm` {value} is invalid") from None


def every_n_epochs(value: Any) -> Any:
    """``check_val_every_n_epoch``: an int >= 1 or None; Lightning's key phrase for a non-integer."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise Bad(f"`check_val_every_n_epoch` should be an integer, found {value!r}.")
    return int_at_least(value, 1, allow_none=True)


def choice(value: Any, choices: tuple[Any, ...]) -> Any:
    if value not in choices or (isinstance(value, bool) and not any(isinstance(c, bool) for c in choices)):
        raise Bad
    return value


def val_check_interval(value: Any) -> Any:
    """Batches (an int, or a float fraction of an epoch), or a duration as ``max_time`` takes it (Lightning 2.6's
    time-based validation): kept as a ``timedelta``."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise Bad
    if isinstance(value, (str, Mapping, datetime.timedelta)):
        return datetime.timedelta(seconds=max_time_seconds(value))
    if isinstance(value, int) and value >= 1:
        return value
    if isinstance(value, float) and 0.0 <= value <= 1.0:
        return value  # 0.0: after every batch, as Lightning reads it (at least one batch)
    if isinstance(value, float) and value > 1.0 and math.isfinite(value) and value.is_integer():
        return int(value)  # a whole number of batches, as Lightning reads it
    raise Bad(_INVALID_LIMIT)


def root_dir(value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)) or isinstance(value, bytes):
        raise Bad(type_error=True)  # Lightning's os.fspath raises a TypeError for it
    text = os.fspath(value)
    if not isinstance(text, str) or "\x00" in text or not text.strip():
        raise Bad
    return value


def seed_value(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2**32 - 1:
        raise Bad
    return value


def callback_list(value: Any) -> list[Any]:
    if value is None:
        return []
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if item is None or isinstance(item, (str, bytes, int, float, bool, type)):
            raise Bad
    return items


def logger_spec(value: Any) -> Any:
    from ...loggers.protocol import is_logger

    if value is None or value is True:
        return True
    if value is False or value in ("csv", "tensorboard"):
        return value
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if all(is_logger(item) for item in items):  # an empty list is no logger, as in Lightning
        return items
    raise Bad


def max_time_seconds(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, datetime.timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, Mapping):
        try:
            seconds = datetime.timedelta(**dict(value)).total_seconds()
        except TypeError:
            raise Bad from None
    elif isinstance(value, str):
        parts = value.strip().split(":")
        if len(parts) != 4 or not all(p.isascii() and p.isdigit() for p in parts):
            raise Bad
        days, hours, minutes, secs = (int(p) for p in parts)
        seconds = datetime.timedelta(days=days, hours=hours, minutes=minutes, seconds=secs).total_seconds()
    else:
        raise Bad
    if seconds <= 0:
        raise Bad
    return seconds


def fast_dev_run(value: Any) -> Any:
    if isinstance(value, bool):
        return 1 if value else 0
    return int_at_least(value, 0)


def deterministic(value: Any) -> Any:
    if value is None or isinstance(value, bool) or value == "warn":
        return value
    raise Bad


def only_none(value: Any) -> Any:
    if value is not None and value is not False:
        raise Bad
    return None


def profiler(value: Any) -> Any:
    """A profiler object, or a name of one (any case, kept lower-case): the Trainer builds it."""
    from ...errors import did_you_mean
    from ...profilers import PROFILER_NAMES, Profiler

    if value is None or value is False or isinstance(value, Profiler):
        return value or None
    if not isinstance(value, str):
        raise Bad
    name = value.lower()
    if name == "xla":
        raise Bad("the XLAProfiler belongs to an XLA back end: install an XLA plugin and pass its profiler object")
    if name not in PROFILER_NAMES:  # Lightning's key phrase, its names (xla included) and a close match
        known = [*PROFILER_NAMES, "xla"]
        hint = did_you_mean(name, PROFILER_NAMES).replace(" Did", "; did")
        raise Bad(
            f"When passing string value for the `profiler` parameter of `Trainer`, it can only be one of {known}{hint}"
        )
    return name


def plugins(value: Any) -> Any:
    """Lightning's ``plugins=`` sorted by kind (:func:`accelplug.selection.sort_plugins`): a cluster environment,
    a precision plugin, a layer sync (how they combine with ``precision=`` and ``sync_batchnorm=`` is the Trainer's)."""
    from ...selection import sort_plugins

    try:
        return sort_plugins(value)
    except MisconfigurationException as exc:
        raise Bad(str(exc)) from None


def compile_spec(value: Any) -> Any:
    if value is None or value is False:  # not compiling, the default: torch.compile's options stay unloaded
        return None
    from ...strategies.compiling import normalize_compile

    try:
        return normalize_compile(value)
    except MisconfigurationException as exc:
        raise Bad(str(exc)) from None
