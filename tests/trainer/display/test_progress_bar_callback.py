"""``trainer.progress_bar_callback`` answers as Lightning's does, though accelplug's own display draws.

Lightning adds a progress-bar callback by default and code reads its totals (``total_train_batches``,
``total_val_batches``) and ``get_metrics``; accelplug draws with its own display and answers with a
read-only bar computing the same figures from the Trainer (never among ``trainer.callbacks``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

import accelplug

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")

FRAMEWORKS = {"lightning": lightning, "accelplug": accelplug}


def _module(framework: Any) -> Any:
    class Module(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            loss = self.layer(batch[0]).sum()
            self.log("shown", loss, prog_bar=True)
            return loss

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            self.log("val", self.layer(batch[0]).sum())

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return Module()


def _loader(samples: int) -> torch.utils.data.DataLoader[Any]:
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(samples, 4)), batch_size=2)


def test_the_default_bar_reports_lightnings_totals_and_metrics(tmp_path: Path) -> None:
    seen = {}
    for name, framework in FRAMEWORKS.items():
        trainer = framework.Trainer(
            max_epochs=1, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
            default_root_dir=str(tmp_path / name), limit_val_batches=3, enable_model_summary=False,
        )  # fmt: skip
        module = _module(framework)
        trainer.fit(module, _loader(10), _loader(8))
        bar = trainer.progress_bar_callback
        seen[name] = (bar.total_train_batches, bar.total_val_batches, sorted(bar.get_metrics(trainer, module)))
    assert seen["accelplug"] == seen["lightning"] == (5, 3, ["shown"])


def test_no_bar_with_enable_progress_bar_false() -> None:
    assert accelplug.Trainer(enable_progress_bar=False, logger=False).progress_bar_callback is None


def test_the_default_bar_is_not_among_the_callbacks() -> None:
    trainer = accelplug.Trainer(logger=False)
    assert isinstance(trainer.progress_bar_callback, accelplug.pytorch.callbacks.ProgressBar)
    assert trainer.progress_bar_callback not in trainer.callbacks


def test_two_progress_bars_are_refused_with_lightnings_phrase() -> None:
    phrase = "You added multiple progress bar callbacks to the Trainer"
    refusals = {"lightning": lightning.pytorch.utilities.exceptions.MisconfigurationException}
    refusals["accelplug"] = accelplug.MisconfigurationException
    for name, framework in FRAMEWORKS.items():
        callbacks = framework.pytorch.callbacks
        with pytest.raises(refusals[name], match=phrase):
            framework.Trainer(callbacks=[callbacks.TQDMProgressBar(), callbacks.RichProgressBar()], logger=False)
