"""Logger behaviours Lightning's own tests check: folders through ``name``/``version``, the graph before ``fit``, the
Trainer's ``log_dir`` with a logger that is not a file logger, ``LearningRateMonitor``'s names as groups grow, and
a ``step`` the module logs becoming its row's step."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug import Trainer
from accelplug.callbacks import LearningRateMonitor
from accelplug.demos.boring_classes import BoringModel
from accelplug.loggers import CSVLogger, Logger, TensorBoardLogger

from ..callbacks.parity import lightning, quiet_lightning


def test_tensorboard_folder_follows_overridden_name_and_version(tmp_path: Path) -> None:
    class Named(TensorBoardLogger):
        @property
        def name(self) -> str:
            return "given"

        @property
        def version(self) -> str:
            return "v"

    assert Named(tmp_path, sub_dir="sub").log_dir == os.path.join(tmp_path, "given", "v", "sub")


@pytest.mark.filterwarnings(
    "ignore:`torch.jit.trace` is deprecated:DeprecationWarning",  # inside add_graph: torch's own tracer
    "ignore:`torch.jit.trace_method` is deprecated:DeprecationWarning",
)
def test_tensorboard_logs_a_graph_before_any_fit(tmp_path: Path) -> None:
    logger = TensorBoardLogger(tmp_path, log_graph=True)
    logger.log_graph(BoringModel(), torch.randn(2, 32))  # the module has no trainer: tracing must not ask for one
    logger.finalize("success")
    assert any(p.name.startswith("events.out.tfevents") for p in Path(logger.log_dir).iterdir())


class SaveDirOnly(Logger):
    """A logger that is not a file logger: Lightning's ``trainer.log_dir`` is its ``save_dir``."""

    def __init__(self, save_dir: Path) -> None:
        self._save_dir = save_dir

    name, version = "plain", 0

    @property
    def save_dir(self) -> str:
        return os.fspath(self._save_dir)

    def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
        pass

    def log_hyperparams(self, params: Any, *args: Any, **kwargs: Any) -> None:
        pass


def test_log_dir_is_a_plain_loggers_save_dir(tmp_path: Path) -> None:
    trainer = Trainer(default_root_dir=tmp_path / "root", logger=SaveDirOnly(tmp_path / "saved"), accelerator="cpu")
    assert trainer.log_dir == os.fspath(tmp_path / "saved")


def _growing_fit(framework: Any, root: Path) -> dict[str, list[float]]:
    """One SGD optimizer that gains a parameter group at the second epoch (as a finetuning callback does)."""

    class Grows(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.first, self.second = torch.nn.Linear(4, 4), torch.nn.Linear(4, 1)

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            return self.second(self.first(batch[0])).sum()

        def on_train_epoch_start(self) -> None:
            if self.current_epoch == 1:
                self.optimizers().optimizer.add_param_group({"params": self.second.parameters(), "lr": 0.5})

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.first.parameters(), lr=0.1)

    monitor = framework.pytorch.callbacks.LearningRateMonitor() if framework is lightning else LearningRateMonitor()
    logger = framework.pytorch.loggers.CSVLogger(root) if framework is lightning else CSVLogger(root)
    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(8, 4)), batch_size=4)
    trainer = framework.Trainer(
        default_root_dir=root,
        max_epochs=3,
        accelerator="cpu",
        callbacks=[monitor],
        logger=logger,
        log_every_n_steps=1,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
    )
    trainer.fit(Grows(), data)
    return dict(monitor.lrs)


def test_lr_monitor_names_a_grown_optimizer_as_lightning_does(tmp_path: Path) -> None:
    ours = _growing_fit(__import__("accelplug"), tmp_path / "accelplug")
    with quiet_lightning():
        theirs = _growing_fit(lightning, tmp_path / "lightning")
    assert list(ours) == list(theirs) == ["lr-SGD/pg1", "lr-SGD/pg2"]
    assert ours == theirs


def _rows_with_a_logged_step(framework: Any, root: Path) -> list[tuple[dict[str, float], int | None]]:
    """The rows a logger receives when the module logs a ``step`` of its own at each epoch's end."""

    import importlib

    theirs = framework is lightning
    base_logger = lightning.pytorch.loggers.Logger if theirs else Logger
    base = importlib.import_module("lightning.pytorch.demos.boring_classes").BoringModel if theirs else BoringModel

    class Rows(base_logger):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.rows: list[tuple[dict[str, float], int | None]] = []

        name, version = "rows", 0

        def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
            self.rows.append((dict(metrics), step))

        def log_hyperparams(self, params: Any, *args: Any, **kwargs: Any) -> None:
            pass

    class LogsAStep(base):  # type: ignore[misc, valid-type]
        def on_train_epoch_end(self) -> None:
            self.log_dict({"step": 10.0 * (self.current_epoch + 1), "train_acc": 0.5})

    logger = Rows()
    trainer = framework.Trainer(
        default_root_dir=root,
        max_epochs=2,
        limit_train_batches=2,
        limit_val_batches=0,
        logger=logger,
        log_every_n_steps=1,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
    )
    trainer.fit(LogsAStep())
    return logger.rows


def test_a_logged_step_is_the_rows_step_and_leaves_the_row_as_in_lightning(tmp_path: Path) -> None:
    ours = _rows_with_a_logged_step(__import__("accelplug"), tmp_path / "accelplug")
    with quiet_lightning():
        theirs = _rows_with_a_logged_step(lightning, tmp_path / "lightning")
    assert ours == theirs == [({"train_acc": 0.5}, 10), ({"train_acc": 0.5}, 20)]
