"""Each logger's experiment exists from the start of every stage, as in Lightning 2.6, even when nothing is logged.

Lightning makes ``logger.experiment`` for every logger before the ``setup`` hooks of fit, validate, test and
predict, so a run that logs nothing still leaves TensorBoard's (empty) event file and CSVLogger's run folder,
and a ``setup`` hook finds the experiment already made. Found by Lightning's DQN example
(``tests/lightning_compat/projects/pl_dqn.py``), whose module logs nothing: Lightning left an event file there
and accelplug did not. The same module and calls run under both frameworks; the files must match.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from accelplug.loggers.protocol import LoggerFailed, start_experiments
from tests.callbacks.parity import quiet_lightning

#: These fits use a few batches on purpose, under the default ``log_every_n_steps=50``: Lightning's hint about it (which
#: accelplug gives too, in both frameworks) is expected here and says nothing about what these tests check.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:The number of training batches \(\d+\) is smaller than the logging interval"
)

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")


def _silent_module(framework: Any) -> Any:
    """A module whose steps log nothing; its ``setup`` records whether each logger's experiment was made."""

    class Silent(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)
            self.made_at_setup: list[bool] = []

        def setup(self, stage: str) -> None:
            self.made_at_setup = [logger._experiment is not None for logger in self.loggers]

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.layer(x)  # type: ignore[no-any-return]

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            return self(batch[0]).sum()

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            self(batch[0])

        def test_step(self, batch: Any, batch_idx: int) -> None:
            self(batch[0])

        def predict_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            return self(batch[0])

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return Silent()


def _files(folder: Path) -> set[str]:
    return {
        p.relative_to(folder).as_posix().split("events.out.tfevents.")[0] + ("events" if "tfevents" in p.name else "")
        for p in folder.rglob("*")
        if p.is_file()
    }


def _run(framework: Any, folder: Path, stage: str, loggers: str) -> tuple[set[str], list[bool]]:
    folder.mkdir()
    made = {
        "default": True,
        "csv": [framework.pytorch.loggers.CSVLogger(str(folder))],
        "both": [
            framework.pytorch.loggers.TensorBoardLogger(str(folder), name="tb"),
            framework.pytorch.loggers.CSVLogger(str(folder), name="csv"),
        ],
    }[loggers]
    trainer = framework.Trainer(
        default_root_dir=str(folder),
        logger=made,
        max_epochs=1,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        accelerator="cpu",
        devices=1,
    )
    module = _silent_module(framework)
    loader = DataLoader(TensorDataset(torch.randn(4, 2)), batch_size=2)
    with quiet_lightning(framework):
        getattr(trainer, stage)(module, loader)
    return _files(folder), module.made_at_setup


@pytest.mark.parametrize("loggers", ["default", "csv", "both"])
@pytest.mark.parametrize("stage", ["fit", "validate", "test", "predict"])
def test_a_run_that_logs_nothing_leaves_what_lightning_leaves(tmp_path: Path, stage: str, loggers: str) -> None:
    lightning_files, lightning_made = _run(lightning, tmp_path / "lightning", stage, loggers)
    accelplug_files, accelplug_made = _run(accelplug, tmp_path / "accelplug", stage, loggers)
    assert accelplug_files == lightning_files
    assert accelplug_made == lightning_made
    assert all(lightning_made)  # the comparison is about experiments that exist: Lightning made them all
    if loggers != "csv":
        assert any("events" in name for name in lightning_files)


def test_a_logger_whose_experiment_fails_is_named() -> None:
    class Broken:
        @property
        def experiment(self) -> Any:
            raise OSError("no space left on device")

    with pytest.raises(LoggerFailed, match=r"Broken raised making its experiment: OSError: no space left"):
        start_experiments([Broken()])


def test_wandb_experiments_are_made_first() -> None:
    order: list[str] = []

    def logger(name: str) -> Any:
        return type(name, (), {"experiment": property(lambda self: order.append(name))})()

    start_experiments([logger("TensorBoardLogger"), logger("WandbLogger"), logger("CSVLogger")])
    assert order == ["WandbLogger", "TensorBoardLogger", "CSVLogger"]
