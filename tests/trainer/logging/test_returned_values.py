"""What a step returns is not a metric of a ``LightningModule``: only ``self.log`` records one, as in Lightning 2.6.

The returned loss and any scalar returned from ``training_step``, ``validation_step`` or ``test_step`` stay out
of ``callback_metrics``, ``logged_metrics``, the progress-bar metrics, the logger rows and ``validate()``'s
results, which hold exactly what Lightning's hold. (Lightning's progress bar shows ``v_num`` and the ``prog_bar``
values, never the returned loss.) A plain ``torch.nn.Module``, accelplug's own module protocol that Lightning
cannot run, keeps its documented rule: its returned scalars are averaged and logged.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from tests.callbacks.parity import quiet_lightning
from tests.modules import LinearRegression, quiet, regression_data

#: These fits use a few batches on purpose, under the default ``log_every_n_steps=50``: Lightning's hint about it (which
#: accelplug gives too, in both frameworks) is expected here and says nothing about what these tests check.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:The number of training batches \(\d+\) is smaller than the logging interval"
)

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")


def _loader() -> DataLoader[Any]:
    x = torch.randn(16, 2, generator=torch.Generator().manual_seed(0))
    return DataLoader(TensorDataset(x), batch_size=4)


def _module(framework: Any) -> Any:
    class ReturnsMore(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> dict[str, Any]:
            loss = self.layer(batch[0]).pow(2).mean()
            self.log("logged", loss)
            return {"loss": loss, "x": torch.tensor(3.0), "y": 2.0}

        def validation_step(self, batch: Any, batch_idx: int) -> dict[str, torch.Tensor]:
            self.log("val_logged", self.layer(batch[0]).mean())
            return {"loss": torch.tensor(1.0), "val_extra": torch.tensor(2.0)}

        def test_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            return self.layer(batch[0]).mean()

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return ReturnsMore()


def _run(framework: Any, root: Path) -> dict[str, Any]:
    logger = framework.pytorch.loggers.CSVLogger(root) if framework is lightning else accelplug.CSVLogger(root)
    trainer = framework.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=2,
        log_every_n_steps=1,
        logger=logger,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        num_sanity_val_steps=0,
        default_root_dir=root,
    )
    module = _module(framework)
    with quiet_lightning(framework):
        trainer.fit(module, _loader(), _loader())
        seen = {
            "callback_metrics": sorted(trainer.callback_metrics),
            "logged_metrics": sorted(trainer.logged_metrics),
            "progress_bar_metrics": sorted(trainer.progress_bar_metrics),
        }
        seen["validate"] = [sorted(result) for result in trainer.validate(module, _loader(), verbose=False)]
        seen["test"] = [sorted(result) for result in trainer.test(module, _loader(), verbose=False)]
    with open(Path(logger.log_dir) / "metrics.csv", newline="") as file:
        seen["columns"] = sorted(csv.DictReader(file).fieldnames or [])
    return seen


def test_only_what_self_log_recorded_reaches_the_metrics_and_loggers_as_in_lightning(tmp_path: Path) -> None:
    ours, theirs = _run(accelplug, tmp_path / "accelplug"), _run(lightning, tmp_path / "lightning")
    assert ours == theirs
    assert ours["columns"] == ["epoch", "logged", "step", "val_logged"]
    assert ours["test"] == [[]]  # test_step logged nothing: no metric, whatever it returned


def test_a_plain_torch_module_still_reports_what_its_steps_return(tmp_path: Path) -> None:
    # accelplug's own protocol for a module without self.log: the returned loss is averaged as val_loss
    trainer = accelplug.Trainer(**quiet(max_epochs=1, default_root_dir=tmp_path, enable_checkpointing=False))
    model, data, in_order = LinearRegression(), regression_data(n=64), regression_data(n=64, shuffle=False)
    trainer.fit(model, data, in_order)
    (validated,) = trainer.validate(model, in_order, verbose=False)
    assert set(validated) == {"val_loss"}
    assert "val_loss" in trainer.callback_metrics
