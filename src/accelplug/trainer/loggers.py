"""Where metrics go: a CSV file always (no extra dependency), TensorBoard when installed, or any logger object.

A logger is anything with ``log_metrics(metrics, step)``; ``log_hyperparams(params)``, ``save()`` /
``flush()`` and ``finalize(status)`` are called when present. That is Lightning's ``Logger`` protocol, so
a Lightning logger object (or Weights & Biases', MLflow's...) can be passed as ``Trainer(logger=...)``.

Metrics arrive as dicts of floats at logging steps and epoch ends, never per step, so the CSV logger
keeps its table in memory and rewrites the file on flush; that also lets the header grow when a new
metric appears (validation metrics show up after the first training rows).
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import MisconfigurationException

__all__ = [
    "CSVLogger",
    "MetricsLogger",
    "TensorBoardLogger",
    "call_if_present",
    "is_logger",
    "next_version_dir",
]


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


class CSVLogger(MetricsLogger):
    """``metrics.csv``: one row per logging event, a column per metric (empty where not logged).

    ``CSVLogger(save_dir, name=..., version=...)`` as in Lightning writes to ``save_dir/name/version_N``;
    the Trainer's own CSV logger writes to the run folder it chose.
    """

    def __init__(
        self,
        save_dir: str | os.PathLike[str] = ".",
        name: str = "accelplug_logs",
        version: int | str | None = None,
        *,
        folder: Path | None = None,
    ) -> None:
        folder = folder if folder is not None else run_folder(save_dir, name, version)
        self.log_dir = folder
        self.path = folder / "metrics.csv"
        self._rows: list[dict[str, Any]] = []
        self._columns: dict[str, None] = {"step": None}
        self._dirty = False

    @property
    def experiment(self) -> CSVLogger:
        return self

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        row: dict[str, Any] = {"step": step, **metrics}
        self._columns.update(dict.fromkeys(row))
        self._rows.append(row)
        self._dirty = True

    def log_hyperparams(self, params: Mapping[str, Any]) -> None:
        assert self.log_dir is not None
        self.log_dir.mkdir(parents=True, exist_ok=True)
        (self.log_dir / "hparams.json").write_text(json.dumps(dict(params), indent=2, default=repr) + "\n")

    def flush(self) -> None:
        if not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temp = self.path.with_suffix(".csv.tmp")
        with temp.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(self._columns))
            writer.writeheader()
            writer.writerows(self._rows)
        os.replace(temp, self.path)
        self._dirty = False


class TensorBoardLogger(MetricsLogger):
    """Event files for TensorBoard (the ``accelplug[tensorboard]`` extra); ``.experiment`` is the SummaryWriter."""

    def __init__(
        self,
        save_dir: str | os.PathLike[str] = ".",
        name: str = "accelplug_logs",
        version: int | str | None = None,
        *,
        folder: Path | None = None,
    ) -> None:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as exc:
            raise MisconfigurationException(
                f'TensorBoard logging needs the tensorboard package: pip install "accelplug[tensorboard]" ({exc}).'
            ) from None
        folder = folder if folder is not None else run_folder(save_dir, name, version)
        self.log_dir = folder
        self._writer = SummaryWriter(log_dir=str(folder / "tensorboard"))

    @property
    def experiment(self) -> Any:
        return self._writer

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        for name, value in metrics.items():
            self._writer.add_scalar(name, value, step)

    def log_hyperparams(self, params: Mapping[str, Any]) -> None:
        simple = {k: v for k, v in params.items() if isinstance(v, (int, float, str, bool))}
        if simple:
            self._writer.add_text("hparams", json.dumps(simple, indent=2))

    def flush(self) -> None:
        self._writer.flush()

    def finalize(self, status: str) -> None:
        self._writer.close()
