"""Under two gloo processes the Trainer calls its loggers on every rank, as Lightning 2.6 does.

Whether a call does anything off rank 0 is the logger's choice: a logger whose methods are plain hears from
rank 1 too (a per-process record, say), while the built-in ones are ``rank_zero_only`` and write once. Only
``after_save_checkpoint`` is called on rank 0 alone (the ``ModelCheckpoint`` makes that call, Lightning's rule).
``ddp_fork`` runs the fit in two forks of this process (``ddp_spawn`` takes the same path, in fresh interpreters
that cost seconds more); each records its calls in a file named after its rank.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from accelplug import LightningModule, Trainer
from accelplug.callbacks import ModelCheckpoint
from accelplug.loggers import CSVLogger, Logger
from tests.modules import regression_data


class PerRankRecord(Logger):
    """Writes the name of every call it receives to ``<folder>/rank<N>.txt``, N being the caller's global rank."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @property
    def name(self) -> str:
        return "per-rank"

    @property
    def version(self) -> int:
        return 0

    def _note(self, call: str) -> None:
        rank = torch.distributed.get_rank() if torch.distributed.is_initialized() else "parent"
        with (self.folder / f"rank{rank}.txt").open("a") as out:
            out.write(call + "\n")

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        self._note("log_metrics " + ",".join(sorted(metrics)))

    def log_hyperparams(self, params: Any, *args: Any, **kwargs: Any) -> None:
        self._note("log_hyperparams")

    def log_graph(self, model: torch.nn.Module, input_array: torch.Tensor | None = None) -> None:
        self._note("log_graph")

    def save(self) -> None:
        self._note("save")

    def finalize(self, status: str) -> None:
        self._note(f"finalize {status}")

    def after_save_checkpoint(self, checkpoint_callback: Any) -> None:
        self._note("after_save_checkpoint")


class LogsItsRank(LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.linear = torch.nn.Linear(3, 1)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        self.log(f"rank{self.global_rank}_loss", 1.0)
        x, y = batch
        return torch.nn.functional.mse_loss(self.linear(x), y)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.1)


def test_every_rank_calls_the_loggers_and_the_built_in_ones_write_only_on_rank_zero(tmp_path: Path) -> None:
    csv_logger = CSVLogger(tmp_path / "csv")
    trainer = Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp_fork",
        max_steps=2,
        log_every_n_steps=1,
        logger=[PerRankRecord(tmp_path), csv_logger],
        callbacks=[ModelCheckpoint(dirpath=tmp_path / "checkpoints")],
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=tmp_path,
    )
    trainer.fit(LogsItsRank(), regression_data(n=32, batch_size=8))

    rank0, rank1 = ((tmp_path / f"rank{rank}.txt").read_text().splitlines() for rank in (0, 1))
    assert rank1[:3] == ["log_hyperparams", "log_graph", "save"]
    assert rank1.count("log_metrics epoch,rank1_loss") == 2, "rank 1's own values, at each of its two logging steps"
    assert rank1[-1] == "finalize success"
    assert "after_save_checkpoint" not in rank1
    assert rank0.count("log_metrics epoch,rank0_loss") == 2 and "after_save_checkpoint" in rank0

    (version,) = (tmp_path / "csv" / "lightning_logs").iterdir()  # one folder, written by rank 0 alone
    with (version / "metrics.csv").open() as file:
        rows = list(csv.DictReader(file))
    assert [row["step"] for row in rows] == ["0", "1"]
    assert all(row["rank0_loss"] == "1.0" for row in rows)
    assert "rank1_loss" not in rows[0]
