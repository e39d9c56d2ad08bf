"""A real accelplug fit logging into each tracker: what reaches the service today, through the Trainer.

The Trainer already sends hyper-parameters, metrics and ``finalize(status)`` to any logger object. It does
not yet call ``after_save_checkpoint`` (the follow-up wires it, after every save, as Lightning does), so
``ForwardSaves`` stands in for that one call here: it runs after accelplug's real ModelCheckpoint and
forwards each new save to the logger. What the uploads show is what accelplug's ModelCheckpoint exposes
today: the top-k files with their scores; ``last.ckpt`` is not uploaded because the callback has no
``current_score`` yet (see docs/results.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

import accelplug
from accelplug.callbacks import Callback, ModelCheckpoint
from tests.modules import quiet, regression_data

from .readers import comet_archives, read_comet_archive, read_wandb_run, wandb_run_dir
from .test_mlflow import recorded


class Regression(accelplug.LightningModule):
    def __init__(self, lr: float = 0.05, width: int = 3) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.linear = torch.nn.Linear(width, 1)

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.linear(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch: Any, batch_idx: int) -> None:
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.linear(x), y))

    def configure_optimizers(self) -> Any:
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)


class ForwardSaves(Callback):
    """Calls ``logger.after_save_checkpoint`` when the ModelCheckpoint saved a new best file.

    The Trainer runs ModelCheckpoint after the other callbacks (as Lightning does), so an epoch's save is
    seen at the next epoch's end, and the last one when fit ends.
    """

    def __init__(self, checkpoint: ModelCheckpoint) -> None:
        self.checkpoint = checkpoint
        self.seen: set[str] = set()

    def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        if self.checkpoint.best_model_path and self.checkpoint.best_model_path not in self.seen:
            self.seen.add(self.checkpoint.best_model_path)
            trainer.logger.after_save_checkpoint(self.checkpoint)

    def on_fit_end(self, trainer: Any, pl_module: Any) -> None:
        self.on_train_epoch_end(trainer, pl_module)


def _fit(logger: Any, root: Path) -> ModelCheckpoint:
    checkpoint = ModelCheckpoint(monitor="val_loss", save_top_k=2)
    trainer = accelplug.Trainer(
        **quiet(
            max_epochs=3,
            logger=logger,
            callbacks=[checkpoint, ForwardSaves(checkpoint)],
            default_root_dir=root,
            log_every_n_steps=2,
            enable_model_summary=False,
        )
    )
    trainer.fit(Regression(), regression_data(n=64, batch_size=16), regression_data(n=32, batch_size=16, shuffle=False))
    return checkpoint


def test_a_fit_reaches_mlflow(mlflow_server: Any, tmp_path: Path) -> None:
    from accelplug.loggers.mlflow import MLFlowLogger

    logger = MLFlowLogger(experiment_name="real-fit", tracking_uri=mlflow_server.uri, log_model="all")
    checkpoint = _fit(logger, tmp_path)
    found = recorded(mlflow_server, str(logger.run_id), tmp_path / "download")

    assert found["status"] == "FINISHED"
    assert found["params"] == {"lr": "0.05", "width": "3"}
    assert [step for step, _ in found["metrics"]["val_loss"]] == [3, 7, 11]  # 4 steps an epoch, Lightning's steps
    assert len(found["metrics"]["train_loss"]) == 6  # every 2 steps
    uploaded = {name: details["aliases"] for name, details in found["artifacts"].items()}
    best = Path(checkpoint.best_model_path).stem
    assert uploaded[best] == "['latest', 'best']"
    assert set(uploaded) >= {Path(p).stem for p in checkpoint.best_k_models}


def test_a_fit_reaches_wandb(wandb_offline: Path, tmp_path: Path) -> None:
    from accelplug.loggers.wandb import WandbLogger

    logger = WandbLogger(project="real-fit", save_dir=wandb_offline, log_model=True)
    checkpoint = _fit(logger, tmp_path)
    run_id = str(logger.version)
    logger.experiment.finish()
    run = read_wandb_run(wandb_run_dir(wandb_offline, run_id))

    assert run.config == {"lr": 0.05, "width": 3}
    val_rows = [row for row in run.history if "val_loss" in row]
    assert [row["trainer/global_step"] for row in val_rows] == [3, 7, 11]  # Lightning's steps
    # log_model=True: the surviving top-2 files, uploaded when the fit succeeded.
    assert sorted(a.metadata["original_filename"] for a in run.artifacts) == sorted(
        Path(p).name for p in checkpoint.best_k_models
    )
    best = [a for a in run.artifacts if "best" in a.aliases]
    assert [a.metadata["original_filename"] for a in best] == [Path(checkpoint.best_model_path).name]
    assert best[0].metadata["score"] == pytest.approx(checkpoint.best_model_score)


def test_a_fit_reaches_comet(comet_offline: Path, tmp_path: Path) -> None:
    from accelplug.loggers.comet import CometLogger

    logger = CometLogger(online=False, project="real-fit", offline_directory=str(comet_offline), log_model="all")
    checkpoint = _fit(logger, tmp_path)
    logger.experiment.end()
    (archive,) = comet_archives(comet_offline)
    found = read_comet_archive(archive)

    assert found.params == {"lr": 0.05, "width": 3}
    assert [(step, epoch) for name, _, step, epoch in found.metrics if name == "val_loss"] == [(3, 0), (7, 1), (11, 2)]
    assert {m["file"] for m in found.models} >= {Path(p).name for p in checkpoint.best_k_models}
