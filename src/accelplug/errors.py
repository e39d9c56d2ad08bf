"""One exception hierarchy for every mistake a user can make in configuring a run.

Every message is written for the person at the keyboard: the value that was asked for, why it cannot
be, what to do, and what is accepted or available. ``MisconfigurationException`` subclasses
``ValueError`` so code that already guards configuration with ``except ValueError`` keeps working.
:class:`PossibleUserWarning` is the one warning category for what is often, not always, a mistake.
"""

from __future__ import annotations

import difflib
import os
import warnings
from collections.abc import Iterable

__all__ = [
    "AcceleratorUnavailableError",
    "BackendNotInstalledError",
    "CheckpointNotFoundError",
    "LightningDeprecationWarning",
    "MisconfigurationException",
    "PackageNotInstalledError",
    "PluginLoadWarning",
    "PossibleUserWarning",
    "SIGTERMException",
    "TunerExit",
    "closest_match",
    "did_you_mean",
    "disable_possible_user_warnings",
]


class MisconfigurationException(ValueError):
    """A configuration the user asked for that accelplug cannot honour."""


class TunerExit(Exception):
    """Raised by a tuner callback that ran for ``Tuner`` alone: the call ends there, torn down as a finished one.

    Lightning's ``_TunerExitException``; not a user mistake, so not a ``MisconfigurationException``.
    """


class AcceleratorUnavailableError(MisconfigurationException):
    """The requested accelerator exists but cannot run on this machine.

    ``reason`` is the accelerator's own diagnosis (for MPS: not a Mac, Rosetta, torch without MPS, an
    old macOS), so the message says what to fix rather than only "not available".
    """

    def __init__(
        self, accelerator: str, reason: str, available: Iterable[str] = (), *, class_name: str | None = None
    ) -> None:
        self.accelerator = accelerator
        self.reason = reason
        self.available = list(available)
        listed = ", ".join(repr(name) for name in self.available) or "none"
        # Lightning's sentence, naming the class, where the accelerator's class is known
        lightning = (
            f"`{class_name}` can not run on your system since the accelerator is not available. " if class_name else ""
        )
        super().__init__(
            f"accelerator={accelerator!r} cannot be used on this machine: {reason}\n"
            f"{lightning}Accelerators available here: {listed}. "
            "Use accelerator='auto' to pick the best of them."
        )


class CheckpointNotFoundError(MisconfigurationException, FileNotFoundError):
    """A checkpoint path that names no file: a configuration error naming the path, and the
    ``FileNotFoundError`` Lightning raises, so either ``except`` catches it."""


class BackendNotInstalledError(MisconfigurationException, ModuleNotFoundError):
    """A class for a back end that a plugin distribution provides (DeepSpeed, XLA) was used where neither is
    installed. Lightning raises an ``ImportError`` (``ModuleNotFoundError``) there; this is one too, and says what
    to install."""


class PackageNotInstalledError(MisconfigurationException, ModuleNotFoundError):
    """An optional package a class needs is not installed (``rich`` for ``RichProgressBar``/``RichModelSummary``).
    Lightning raises ``ModuleNotFoundError`` there; this is one too, and says what to install."""


class SIGTERMException(SystemExit):
    """Lightning's exception for a process that received ``SIGTERM``, for ``Callback.on_exception`` to recognise.

    accelplug's Trainer stops a fit on SIGTERM at the next step boundary on every rank, saves a checkpoint and
    exits with 143 (:mod:`accelplug.trainer.process.interrupts`); the class is here for code that names it.
    """


class PluginLoadWarning(UserWarning):
    """A plugin was skipped; the registry keeps working without it."""


def closest_match(value: str, choices: Iterable[str]) -> str | None:
    """The choice a typo most likely meant, or None when nothing is close.

    A value too short for difflib to call close but that only one choice starts with (``'expo'`` for
    ``'exponential'``) is taken as that choice's abbreviation.
    """
    choices = list(choices)
    matches = difflib.get_close_matches(value.lower(), [c.lower() for c in choices], n=1, cutoff=0.6)
    if not matches:
        prefixed = [c for c in choices if len(value) >= 2 and c.lower().startswith(value.lower())]
        return prefixed[0] if len(prefixed) == 1 else None
    for choice in choices:
        if choice.lower() == matches[0]:
            return choice
    return matches[0]


def did_you_mean(value: object, choices: Iterable[str]) -> str:
    """A ``" Did you mean 'x'?"`` suffix for an error message, empty when nothing is close."""
    choices = list(choices)
    if not isinstance(value, str):
        return ""
    match = closest_match(value, choices)
    return f" Did you mean {match!r}?" if match else ""


class PossibleUserWarning(UserWarning):
    """Something that is often, not always, a mistake (few data-loader workers, a tiny logging interval)."""


class LightningDeprecationWarning(DeprecationWarning):
    """A form Lightning still accepts but will remove (the category of ``rank_zero_deprecation``), shown by
    default, unlike Python's own ``DeprecationWarning`` outside ``__main__``."""


warnings.simplefilter("default", LightningDeprecationWarning)


def disable_possible_user_warnings(module: str = "") -> None:
    """Ignore ``PossibleUserWarning`` from every module, or from the modules whose name starts with ``module``."""
    warnings.filterwarnings("ignore", category=PossibleUserWarning, module=module)


# Lightning's switch for a whole run, without touching the script: POSSIBLE_USER_WARNINGS=off (or 0) in the
# environment silences them from the start, as ``import lightning.pytorch`` does.
if os.environ.get("POSSIBLE_USER_WARNINGS", "").lower() in ("0", "off"):
    disable_possible_user_warnings()
