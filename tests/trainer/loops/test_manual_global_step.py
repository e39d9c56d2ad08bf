"""``global_step`` under manual optimization counts each optimizer step as it happens, as Lightning 2.6 does: the
rest of ``training_step`` (a GAN's discriminator half, a log of the step) already sees the generator's step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity test compares against lightning, not installed here")


def _steps_seen(framework: Any, root: Path) -> tuple[list[tuple[int, ...]], int]:
    class TwoOptimizers(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.automatic_optimization = False
            self.first, self.second = torch.nn.Linear(2, 1), torch.nn.Linear(2, 1)
            self.seen: list[tuple[int, ...]] = []

        def training_step(self, batch: Any, batch_idx: int) -> None:
            first, second = self.optimizers()
            before = self.global_step
            for optimizer, layer in ((first, self.first), (second, self.second)):
                self.manual_backward(layer(batch[0]).pow(2).mean())
                optimizer.step()
                optimizer.zero_grad()
            self.seen.append((before, self.global_step, self.trainer.global_step))

        def on_train_batch_end(self, outputs: Any, batch: Any, batch_idx: int) -> None:
            self.seen.append((self.global_step,))

        def configure_optimizers(self) -> Any:
            return [torch.optim.SGD(m.parameters(), lr=0.1) for m in (self.first, self.second)]

    module = TwoOptimizers()
    trainer = framework.Trainer(
        accelerator="cpu",
        max_epochs=1,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        default_root_dir=root,
    )
    loader = DataLoader(TensorDataset(torch.randn(6, 2, generator=torch.Generator().manual_seed(0))), batch_size=2)
    with quiet_lightning(framework):
        trainer.fit(module, loader)
    return module.seen, trainer.global_step


def test_manual_steps_count_in_global_step_as_they_happen(tmp_path: Path) -> None:
    ours = _steps_seen(accelplug, tmp_path / "a")
    assert ours == _steps_seen(lightning, tmp_path / "l")
    assert ours == ([(0, 2, 2), (2,), (2, 4, 4), (4,), (4, 6, 6), (6,)], 6)
