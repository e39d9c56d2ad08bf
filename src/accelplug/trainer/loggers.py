"""Metric files: a CSV file always (no extra dependency), TensorBoard when it is installed and asked for.

Metrics arrive as dicts of floats at logging steps and validation ends, never per step, so a simple
in-memory table rewritten on flush costs nothing measurable; it also lets the header grow when a new
metric appears (validation metrics show up after the first training rows).
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

from ..errors import MisconfigurationException

__all__ = ["CSVLogger", "MetricsLogger", "TensorBoardLogger", "next_version_dir"]


def next_version_dir(root: Path) -> Path:
    """``root/accelplug_logs/version_N`` with the first N not taken yet."""
    base = root / "accelplug_logs"
    taken = {int(p.name.split("_", 1)[1]) for p in base.glob("version_*") if p.name.split("_", 1)[1].isdigit()}
    version = max(taken, default=-1) + 1
    return base / f"version_{version}"


class MetricsLogger:
    """Receives metrics; subclasses decide where they go."""

    def log_metrics(self, metrics: dict[str, float], step: int) -> None:
        raise NotImplementedError

    def flush(self) -> None:
        """Make everything logged so far visible on disk."""

    def close(self) -> None:
        self.flush()


class CSVLogger(MetricsLogger):
    """``metrics.csv``: one row per logging event, a column per metric (empty where not logged)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "metrics.csv"
        self._rows: list[dict[str, Any]] = []
        self._columns: dict[str, None] = {"step": None}
        self._dirty = False

    def log_metrics(self, metrics: dict[str, float], step: int) -> None:
        row: dict[str, Any] = {"step": step, **metrics}
        self._columns.update(dict.fromkeys(row))
        self._rows.append(row)
        self._dirty = True

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
    """Event files for TensorBoard (the ``accelplug[tensorboard]`` extra)."""

    def __init__(self, folder: Path) -> None:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as exc:
            raise MisconfigurationException(
                f"logger='tensorboard' needs the tensorboard package: pip install \"accelplug[tensorboard]\" ({exc})."
            ) from None
        self._writer = SummaryWriter(log_dir=str(folder / "tensorboard"))

    def log_metrics(self, metrics: dict[str, float], step: int) -> None:
        for name, value in metrics.items():
            self._writer.add_scalar(name, value, step)

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()
