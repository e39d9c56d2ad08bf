"""``Strategy.connect(model)`` and ``strategy.lightning_module``: Lightning's public calls, in both frameworks."""

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
            return self.layer(batch[0]).sum()

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return Module()


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_connect_makes_the_module_the_strategys_lightning_module(name: str) -> None:
    framework = FRAMEWORKS[name]
    strategy = framework.pytorch.strategies.SingleDeviceStrategy("cpu")
    assert strategy.lightning_module is None
    module = _module(framework)
    strategy.connect(module)
    assert strategy.lightning_module is module


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_the_trainer_connects_the_module_it_runs(name: str, tmp_path: Path) -> None:
    framework = FRAMEWORKS[name]
    trainer = framework.Trainer(
        max_steps=1, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False, default_root_dir=str(tmp_path),
    )  # fmt: skip
    module = _module(framework)
    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(4, 4)), batch_size=2)
    trainer.fit(module, data)
    assert trainer.strategy.lightning_module is module
