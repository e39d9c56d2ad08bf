"""Every ``ACCELPLUG_*`` environment variable, read and validated in one place, when it is used.

Variables are read at the moment a value is needed (never at import), so a bad value can only break
the operation that needs it, and the error names the variable, the value and what is accepted. A
variable that looks like ours but is not one we know (``ACCELPLUG_DEVICE=2`` for
``ACCELPLUG_DEVICES``) is reported with the closest known name instead of being silently ignored.
This module imports neither torch nor pydantic.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from .errors import MisconfigurationException, did_you_mean

__all__ = [
    "KNOWN_VARIABLES",
    "PREFIX",
    "check_unknown_variables",
    "config_path",
    "env_choice",
    "env_flag",
    "env_float",
    "env_int",
    "env_names",
    "env_str",
    "unreported_unknown_variables",
]

PREFIX = "ACCELPLUG_"

#: Every variable accelplug reads, with what it does (``accelplug env`` and the docs list them).
KNOWN_VARIABLES: dict[str, str] = {
    "ACCELPLUG_ACCELERATOR": "default accelerator; 'auto' honours it (set by `accelplug launch --cpu`)",
    "ACCELPLUG_DEVICES": "default devices",
    "ACCELPLUG_STRATEGY": "default strategy",
    "ACCELPLUG_PRECISION": "default precision",
    "ACCELPLUG_MPS_FALLBACK": "let operations missing on MPS run on the CPU (1/0)",
    "ACCELPLUG_NUM_NODES": "default number of machines in one run",
    "ACCELPLUG_CONFIG_FILE": "path of the config file to read instead of the user config directory's",
    "ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "1: load no entry-point plugins (built-ins only)",
    "ACCELPLUG_PLUGINS": "comma-separated entry-point names: load only these plugins",
    "ACCELPLUG_PLUGIN_TIMEOUT_S": "seconds a plugin's import or its accelerator's queries may take before it is "
    "reported as hung (default 10)",
    "ACCELPLUG_TRACE_PLUGINS": "1: print every plugin hook call and what it returned",
    "ACCELPLUG_KEEP_TORCH_DEFAULTS": "1: do not switch on TF32/cudnn.benchmark on CUDA",
    "ACCELPLUG_DDP_TIMEOUT_S": "seconds a collective may wait for a peer before the job fails",
    "ACCELPLUG_HANG_TIMEOUT_S": "seconds one rank may keep the others waiting before it is named as hung and the "
    "job ends (0: off, and a failed rank's peers are no longer told to stop)",
    "ACCELPLUG_LAUNCH_FAILURE_GRACE_S": "seconds `accelplug launch` gives the other ranks of a failed worker between "
    "SIGTERM and SIGKILL (default 3)",
}

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def _raw(name: str, environ: Mapping[str, str] | None) -> str | None:
    value = (os.environ if environ is None else environ).get(name)
    if value is None or value.strip() == "":
        return None
    return value.strip()


def _bad(name: str, value: str, accepted: str, choices: list[str] | None = None) -> MisconfigurationException:
    hint = did_you_mean(value, choices) if choices else ""
    return MisconfigurationException(
        f"environment variable {name}={value!r} is invalid: expected {accepted}.{hint} "
        f"Fix or unset it (`unset {name}`)."
    )


def env_str(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The stripped value of ``name``, or None when it is unset or empty."""
    return _raw(name, environ)


def env_names(name: str, environ: Mapping[str, str] | None = None) -> list[str] | None:
    """A comma-separated list of names: None when unset, ``[]`` when set to an empty value.

    Unlike the other readers an empty value is not "unset": ``ACCELPLUG_PLUGINS=`` means "none".
    Names are stripped; empty items (``"a,,b"``, a trailing comma) are dropped; order is kept.
    """
    value = (os.environ if environ is None else environ).get(name)
    if value is None:
        return None
    return list(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))


def env_flag(name: str, default: bool = False, environ: Mapping[str, str] | None = None) -> bool:
    """A switch: 1/true/yes/on or 0/false/no/off (any case); anything else is refused, not guessed."""
    value = _raw(name, environ)
    if value is None:
        return default
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise _bad(name, value, "1/0, true/false, yes/no or on/off", sorted(_TRUE | _FALSE))


def env_float(
    name: str,
    default: float,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    environ: Mapping[str, str] | None = None,
) -> float:
    """A finite number within ``[minimum, maximum]``; nan, inf and words are refused."""
    value = _raw(name, environ)
    if value is None:
        return default
    bounds = _bounds(minimum, maximum)
    try:
        number = float(value)
    except ValueError:
        raise _bad(name, value, f"a number{bounds}") from None
    if (
        not math.isfinite(number)
        or (minimum is not None and number < minimum)
        or (maximum is not None and number > maximum)
    ):
        raise _bad(name, value, f"a finite number{bounds}")
    return number


def env_int(
    name: str,
    default: int,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """A whole number (ASCII digits, optional sign) within ``[minimum, maximum]``."""
    value = _raw(name, environ)
    if value is None:
        return default
    bounds = _bounds(minimum, maximum)
    digits = value[1:] if value[:1] in "+-" else value
    if not (digits.isascii() and digits.isdigit()):
        raise _bad(name, value, f"a whole number{bounds}")
    number = int(value)
    if (minimum is not None and number < minimum) or (maximum is not None and number > maximum):
        raise _bad(name, value, f"a whole number{bounds}")
    return number


def env_choice(name: str, choices: list[str], default: str, environ: Mapping[str, str] | None = None) -> str:
    """One of ``choices`` (case-insensitive)."""
    value = _raw(name, environ)
    if value is None:
        return default
    if value.lower() in choices:
        return value.lower()
    raise _bad(name, value, "one of " + ", ".join(repr(c) for c in choices), choices)


def _bounds(minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f" between {minimum:g} and {maximum:g}"
    if minimum is not None:
        return f" >= {minimum:g}"
    if maximum is not None:
        return f" <= {maximum:g}"
    return ""


def check_unknown_variables(environ: Mapping[str, str] | None = None) -> list[str]:
    """A warning line per ``ACCELPLUG_*`` variable that accelplug does not read (a typo, most often)."""
    env = os.environ if environ is None else environ
    lines = []
    for name in sorted(env):
        if name.upper().startswith(PREFIX) and name.upper() not in KNOWN_VARIABLES:
            lines.append(
                f"environment variable {name} is not one accelplug reads, so it has no effect."
                f"{did_you_mean(name.upper(), list(KNOWN_VARIABLES))}"
            )
    return lines


#: Unknown variable names already reported in this process (the CLI and the config loader share it).
_REPORTED: set[str] = set()


def unreported_unknown_variables(environ: Mapping[str, str] | None = None) -> list[str]:
    """The lines of :func:`check_unknown_variables` not yet reported by this process, marked reported.

    The CLI prints them before a command runs and ``config.load_settings`` warns with them, so a
    typo is reported once per process however many times settings are read.
    """
    env = os.environ if environ is None else environ
    fresh = [name for name in sorted(env) if name.upper().startswith(PREFIX) and name.upper() not in KNOWN_VARIABLES]
    fresh = [name for name in fresh if name not in _REPORTED]
    _REPORTED.update(fresh)
    return check_unknown_variables({name: env[name] for name in fresh})


def config_path() -> Path:
    """The config file in effect: ``$ACCELPLUG_CONFIG_FILE`` or the platform's user config dir.

    Here rather than in :mod:`accelplug.config` so that asking "is there a config file?" (every
    ``Trainer(...)`` does) costs no pydantic import; the file is parsed there only when it exists.
    """
    override = os.environ.get("ACCELPLUG_CONFIG_FILE", "").strip()
    if override:
        return Path(os.path.expanduser(override))
    folder = _xdg_config_home()
    if folder is not None:
        return Path(folder, "accelplug", "config.toml")
    from platformdirs import user_config_path

    return user_config_path("accelplug", appauthor=False) / "config.toml"


def _xdg_config_home() -> str | None:
    """platformdirs' user config folder on Linux (``$XDG_CONFIG_HOME`` when absolute, else ``$HOME/.config``),
    without importing it: platformdirs costs more allocations than the rest of ``Trainer()``'s defaults, enough
    to tip ``import accelplug; Trainer()`` into a full garbage collection. None where platformdirs has more to
    say (another system, Android, a relative or missing ``HOME``); a test holds the two answers equal."""
    if sys.platform != "linux" or hasattr(sys, "getandroidapilevel") or "ANDROID_DATA" in os.environ:
        return None
    configured = os.environ.get("XDG_CONFIG_HOME", "")
    if os.path.isabs(configured):
        return configured
    home = os.environ.get("HOME", "")
    return os.path.join(home, ".config") if os.path.isabs(home) else None
