"""``metrics.csv`` and ``hparams.yaml``: the logger that needs no extra package.

Lightning's two ``CSVLogger`` classes, argument for argument, as one implementation: :class:`FabricCSVLogger`
is ``lightning.fabric.loggers.CSVLogger`` (``root_dir`` is the folder given; hyper-parameters are not
supported) and :class:`CSVLogger`, the Trainer's, adds ``save_dir`` (``root_dir`` becomes ``save_dir/name``)
and ``hparams.yaml``. Runs go to ``<folder given>/name/version_N``; rows are kept in memory and written every
``flush_logs_every_n_steps`` steps and at ``save()``. A row that brings a new metric (validation metrics
appear after the first training rows) rewrites the file with the wider header; otherwise rows are appended.
The folder may be any fsspec URL (``memory://``, ``s3://``...).
"""

from __future__ import annotations

import csv
import io
import os
import warnings
from argparse import Namespace
from collections.abc import Mapping
from typing import Any

import torch

from ._files import SaveDirFolders, VersionedFolders, filesystem, write_hparams_yaml
from ._params import add_prefix, as_dict
from .logger import Logger, rank_zero_experiment, rank_zero_only

__all__ = ["CSVLogger", "ExperimentWriter", "FabricCSVLogger"]


class ExperimentWriter:
    """What ``CSVLogger.experiment`` is: the metrics rows and hyper-parameters of one run folder.

    ``self.logger.experiment.log_metrics({...})`` in user code reaches this object, as in Lightning.
    """

    NAME_METRICS_FILE = "metrics.csv"
    NAME_HPARAMS_FILE = "hparams.yaml"

    def __init__(self, log_dir: str) -> None:
        self.log_dir = log_dir
        self.metrics_file_path = os.path.join(log_dir, self.NAME_METRICS_FILE)
        self.hparams: dict[str, Any] = {}
        #: rows logged since the last save
        self.metrics: list[dict[str, Any]] = []
        #: every column written so far, sorted (Lightning's order)
        self.metrics_keys: list[str] = []
        self._fs = filesystem(log_dir)
        if self._fs.exists(log_dir) and self._fs.listdir(log_dir):
            warnings.warn(
                f"Experiment logs directory {log_dir} exists and is not empty. Previous log files in this "
                "directory will be deleted when the new ones are saved!",
                stacklevel=2,
            )
            if self._fs.isfile(self.metrics_file_path):
                self._fs.rm_file(self.metrics_file_path)
        self._fs.makedirs(log_dir, exist_ok=True)

    def log_hparams(self, params: dict[str, Any]) -> None:
        self.hparams.update(params)
        write_hparams_yaml(self._fs, os.path.join(self.log_dir, self.NAME_HPARAMS_FILE), self.hparams)

    def log_metrics(self, metrics_dict: Mapping[str, Any], step: int | None = None) -> None:
        row = {key: value.item() if isinstance(value, torch.Tensor) else value for key, value in metrics_dict.items()}
        row["step"] = len(self.metrics) if step is None else step
        self.metrics.append(row)

    def save(self) -> None:
        """Write the rows logged since the last save (rewriting the file when a new column appeared)."""
        if not self.metrics:
            return
        new = sorted({key for row in self.metrics for key in row} - set(self.metrics_keys))
        exists = self._fs.isfile(self.metrics_file_path)
        if new:
            self.metrics_keys = sorted([*self.metrics_keys, *new])
        if new and exists:
            with self._fs.open(self.metrics_file_path, "r", newline="") as handle:
                earlier = list(csv.DictReader(handle))
            self._write("w", earlier + self.metrics, header=True)
        else:
            self._write("a" if exists else "w", self.metrics, header=not exists)
        self.metrics = []

    def _write(self, mode: str, rows: list[dict[str, Any]], *, header: bool) -> None:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=self.metrics_keys)
        if header:
            writer.writeheader()
        writer.writerows(rows)
        if mode == "a" and not _appendable(self._fs):
            with self._fs.open(self.metrics_file_path, "r", newline="") as handle:
                buffer = io.StringIO(handle.read() + buffer.getvalue())
            mode = "w"
        with self._fs.open(self.metrics_file_path, mode, newline="") as handle:
            handle.write(buffer.getvalue())


def _appendable(fs: Any) -> bool:
    """Object stores (S3, GCS) cannot append to an object: there the file is rewritten whole."""
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    return protocol in ("file", "local", "memory")


class FabricCSVLogger(VersionedFolders, Logger):
    """Lightning Fabric's ``CSVLogger``: metrics in ``root_dir/name/version_N/metrics.csv``.

    ``fabric.log`` sends metrics here; hyper-parameters are refused (``NotImplementedError``), as in Lightning
    Fabric. The Trainer's :class:`CSVLogger` is this class with ``save_dir`` and ``hparams.yaml``.
    """

    LOGGER_JOIN_CHAR = "-"

    def __init__(
        self,
        root_dir: str | os.PathLike[str],
        name: str | None = "lightning_logs",
        version: int | str | None = None,
        prefix: str = "",
        flush_logs_every_n_steps: int = 100,
    ) -> None:
        from ..errors import MisconfigurationException

        if isinstance(flush_logs_every_n_steps, bool) or not isinstance(flush_logs_every_n_steps, int):
            raise MisconfigurationException(
                f"{type(self).__name__}(flush_logs_every_n_steps={flush_logs_every_n_steps!r}): expected an int >= 1."
            )
        if flush_logs_every_n_steps < 1:
            raise MisconfigurationException(
                f"{type(self).__name__}(flush_logs_every_n_steps={flush_logs_every_n_steps}): expected an int >= 1."
            )
        self._root_dir = os.fspath(root_dir)
        self._name = name or ""
        self._version = version
        self._prefix = prefix
        self._flush_logs_every_n_steps = flush_logs_every_n_steps
        self._check_filesystem()
        self._experiment: ExperimentWriter | None = None

    @property
    def log_dir(self) -> str:
        """``<folder given>/name/version_N`` (or the string version's own folder)."""
        return self._run_folder()

    @property
    @rank_zero_experiment
    def experiment(self) -> ExperimentWriter:
        if self._experiment is None:
            self._fs.makedirs(self.root_dir, exist_ok=True)
            self._experiment = ExperimentWriter(self.log_dir)
        return self._experiment

    @rank_zero_only
    def log_hyperparams(self, params: dict[str, Any] | Namespace | None = None, *args: Any, **kwargs: Any) -> None:
        """Not supported by Lightning Fabric's CSV logger (the Trainer's :class:`CSVLogger` writes ``hparams.yaml``)."""
        raise NotImplementedError("The `CSVLogger` does not yet support logging hyperparameters.")

    @rank_zero_only
    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        metrics = add_prefix(metrics, self._prefix, self.LOGGER_JOIN_CHAR)
        experiment = self.experiment
        if step is None:
            step = len(experiment.metrics)
        experiment.log_metrics(metrics, step)
        if (step + 1) % self._flush_logs_every_n_steps == 0:
            self.save()

    @rank_zero_only
    def save(self) -> None:
        self.experiment.save()

    @rank_zero_only
    def finalize(self, status: str) -> None:
        if self._experiment is not None:  # nothing was logged: leave no empty run folder behind
            self.save()


class CSVLogger(SaveDirFolders, FabricCSVLogger):
    """Metrics in ``save_dir/name/version_N/metrics.csv``, hyper-parameters in ``hparams.yaml`` beside it."""

    def __init__(
        self,
        save_dir: str | os.PathLike[str],
        name: str | None = "lightning_logs",
        version: int | str | None = None,
        prefix: str = "",
        flush_logs_every_n_steps: int = 100,
    ) -> None:
        super().__init__(
            root_dir=save_dir,
            name=name,
            version=version,
            prefix=prefix,
            flush_logs_every_n_steps=flush_logs_every_n_steps,
        )

    @rank_zero_only
    def log_hyperparams(self, params: dict[str, Any] | Namespace | None = None, *args: Any, **kwargs: Any) -> None:
        self.experiment.log_hparams(as_dict(params))
