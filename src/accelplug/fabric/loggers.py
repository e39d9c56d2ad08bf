"""``accelplug.fabric.loggers``: where ``fabric.log`` sends metrics, with Lightning Fabric's logger signatures.

``CSVLogger(root_dir, name="lightning_logs", version=None)`` writes ``root_dir/name/version_N/metrics.csv``
(a ``step`` column and one column per metric name, sorted; rows written every ``flush_logs_every_n_steps``
steps and at ``finalize``); ``TensorBoardLogger`` writes event files there through torch's ``SummaryWriter``
(the ``tensorboard`` package must be installed). Both write from the global-zero process only. Any object
with ``log_metrics(metrics, step)`` is a logger too: ``Fabric(loggers=...)`` asks nothing else of it.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

from ..distributed.rank_zero import rank_zero_only
from ..errors import MisconfigurationException

__all__ = ["CSVLogger", "Logger", "TensorBoardLogger"]


class Logger:
    """The methods Fabric calls on a logger; a subclass overrides ``log_metrics`` (and ``save``/``finalize``)."""

    @property
    def name(self) -> str:
        return ""

    @property
    def version(self) -> int | str:
        return 0

    def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define log_metrics(metrics, step)")

    def log_hyperparams(self, params: Any) -> None:
        """Record the run's hyperparameters (the default records nothing)."""

    def save(self) -> None:
        """Write what was logged so far."""

    def finalize(self, status: str) -> None:
        self.save()


class _Versioned(Logger):
    def __init__(self, root_dir: str | os.PathLike[str], name: str | None, version: int | str | None) -> None:
        self._root_dir = Path(root_dir)
        self._name = name or ""
        self._version = version

    @property
    def root_dir(self) -> str:
        return str(self._root_dir)

    @property
    def name(self) -> str:
        return self._name

    @property
    def version(self) -> int | str:
        if self._version is None:
            self._version = self._next_version()
        return self._version

    @property
    def log_dir(self) -> str:
        """``root_dir/name/version_N`` (or ``root_dir/name/<version>`` for a version given as text)."""
        version = self.version if isinstance(self.version, str) else f"version_{self.version}"
        return str(self._root_dir / self._name / version)

    def _next_version(self) -> int:
        folder = self._root_dir / self._name
        taken = [
            int(p.name.split("_", 1)[1])
            for p in (folder.iterdir() if folder.is_dir() else [])
            if p.is_dir() and p.name.startswith("version_") and p.name.split("_", 1)[1].isdigit()
        ]
        return max(taken) + 1 if taken else 0


class CSVLogger(_Versioned):
    """Metrics as rows of ``metrics.csv`` in :attr:`log_dir`."""

    def __init__(
        self,
        root_dir: str | os.PathLike[str],
        name: str | None = "lightning_logs",
        version: int | str | None = None,
        prefix: str = "",
        flush_logs_every_n_steps: int = 100,
    ) -> None:
        super().__init__(root_dir, name, version)
        self._prefix = prefix
        self._flush_every = flush_logs_every_n_steps
        self._rows: list[dict[str, Any]] = []
        self._columns: list[str] = []

    @rank_zero_only
    def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
        row: dict[str, Any] = {f"{self._prefix}-{k}" if self._prefix else k: v for k, v in metrics.items()}
        row["step"] = len(self._rows) if step is None else step
        self._rows.append(row)
        if (row["step"] + 1) % self._flush_every == 0:
            self.save()

    @rank_zero_only
    def save(self) -> None:
        if not self._rows:
            return
        path = Path(self.log_dir) / "metrics.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        columns = sorted(set(self._columns).union(*self._rows))
        earlier: list[dict[str, Any]] = []
        if columns != self._columns and path.is_file():  # a new metric name: rewrite with the wider header
            with path.open(newline="") as handle:
                earlier = list(csv.DictReader(handle))
        rewrite = bool(earlier) or not path.is_file()
        with path.open("w" if rewrite else "a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns)
            if rewrite:
                writer.writeheader()
                writer.writerows(earlier)
            writer.writerows(self._rows)
        self._columns = columns
        self._rows = []


class TensorBoardLogger(_Versioned):
    """Metrics as TensorBoard scalars in :attr:`log_dir` (``tensorboard --logdir root_dir``)."""

    def __init__(
        self,
        root_dir: str | os.PathLike[str],
        name: str | None = "lightning_logs",
        version: int | str | None = None,
        prefix: str = "",
        sub_dir: str | None = None,
        **writer_options: Any,
    ) -> None:
        import importlib.util

        if importlib.util.find_spec("tensorboard") is None:
            raise MisconfigurationException(
                "TensorBoardLogger writes through torch.utils.tensorboard, which needs the tensorboard package: "
                "`pip install tensorboard`, or log with CSVLogger."
            )
        super().__init__(root_dir, name, version)
        self._prefix = prefix
        self._sub_dir = sub_dir
        self._writer_options = writer_options
        self._writer: Any = None

    @property
    def log_dir(self) -> str:
        base = super().log_dir
        return str(Path(base) / self._sub_dir) if self._sub_dir else base

    @property
    def experiment(self) -> Any:
        """torch's ``SummaryWriter`` (made on first use)."""
        if self._writer is None:
            from torch.utils.tensorboard import SummaryWriter

            self._writer = SummaryWriter(log_dir=self.log_dir, **self._writer_options)
        return self._writer

    @rank_zero_only
    def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
        for key, value in metrics.items():
            self.experiment.add_scalar(f"{self._prefix}-{key}" if self._prefix else key, value, step)

    @rank_zero_only
    def save(self) -> None:
        if self._writer is not None:
            self._writer.flush()

    @rank_zero_only
    def finalize(self, status: str) -> None:
        if self._writer is not None:
            self._writer.flush()
            self._writer.close()
            self._writer = None
