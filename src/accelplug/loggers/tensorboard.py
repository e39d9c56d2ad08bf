"""TensorBoard event files (the ``accelplug[tensorboard]`` extra), through torch's own ``SummaryWriter``."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import MisconfigurationException
from .base import MetricsLogger, run_folder

__all__ = ["TensorBoardLogger"]


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
