"""The logger protocol: what the Trainer calls on a logger, and the run folders loggers write to.

A logger is anything with ``log_metrics(metrics, step)``; ``log_hyperparams(params)``, ``save()`` /
``flush()`` and ``finalize(status)`` are called when present. That is Lightning's ``Logger`` protocol, so
a Lightning logger object (or Weights & Biases', MLflow's...) can be passed as ``Trainer(logger=...)``.

Metrics arrive as dicts of floats at logging steps and epoch ends, never per step. The built-in loggers
(:mod:`.csv_logs`, :mod:`.tensorboard`) subclass :class:`MetricsLogger`; a new one is a module of its own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["MetricsLogger", "call_if_present", "is_logger", "next_version_dir", "run_folder"]


def next_version_dir(root: Path, name: str = "accelplug_logs") -> Path:
    """``root/name/version_N`` with the first N not taken yet."""
    base = root / name
    taken = {int(p.name.split("_", 1)[1]) for p in base.glob("version_*") if p.name.split("_", 1)[1].isdigit()}
    version = max(taken, default=-1) + 1
    return base / f"version_{version}"


def run_folder(save_dir: str | os.PathLike[str], name: str, version: int | str | None) -> Path:
    """Lightning's layout: ``save_dir/name/version_N`` (the next free N unless ``version`` is given)."""
    base = Path(save_dir).expanduser()
    if version is None:
        return next_version_dir(base, name)
    return base / name / (version if isinstance(version, str) else f"version_{version}")


def is_logger(obj: object) -> bool:
    """Whether ``obj`` follows the logger protocol (at least ``log_metrics``)."""
    return callable(getattr(obj, "log_metrics", None))


def call_if_present(logger: object, method: str, *args: Any) -> None:
    function = getattr(logger, method, None)
    if callable(function):
        function(*args)


class MetricsLogger:
    """Receives metrics; subclasses decide where they go."""

    #: The run folder this logger writes to (None: it writes nowhere local).
    log_dir: Path | None = None

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        raise NotImplementedError

    def log_hyperparams(self, params: Mapping[str, Any]) -> None:
        """Record the module's hyperparameters (``save_hyperparameters``) once per run."""

    def flush(self) -> None:
        """Make everything logged so far visible on disk."""

    def save(self) -> None:
        self.flush()

    def finalize(self, status: str) -> None:
        self.flush()

    def close(self) -> None:
        self.finalize("success")
