"""``metrics.csv``: the logger that needs no extra package, and the Trainer's own by default.

Metrics arrive as dicts of floats at logging steps and epoch ends, never per step, so the table is
kept in memory and the file rewritten on flush; that also lets the header grow when a new metric
appears (validation metrics show up after the first training rows).
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .base import MetricsLogger, run_folder

__all__ = ["CSVLogger"]


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
