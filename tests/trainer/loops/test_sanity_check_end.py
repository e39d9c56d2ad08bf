"""``on_sanity_check_end`` runs while the Trainer is still sanity checking, the check's logged values still in
``callback_metrics`` (Lightning 2.6 discards them after the hook); training starts without them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity test compares against lightning, not installed here")


def _seen(framework: Any, root: Path) -> list[Any]:
    seen: list[Any] = []

    class Model(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            out: torch.Tensor = self.layer(batch[0]).mean()
            return out

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            self.log("val", self.layer(batch[0]).mean())

        def on_train_start(self) -> None:
            seen.append(("train_start", sorted(self.trainer.callback_metrics)))

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    class Watch(framework.Callback):  # type: ignore[misc, name-defined]
        def on_sanity_check_end(self, trainer: Any, module: Any) -> None:
            seen.append(("sanity_end", trainer.sanity_checking, sorted(trainer.callback_metrics)))

    loader = DataLoader(TensorDataset(torch.randn(4, 2)), batch_size=2)
    trainer = framework.Trainer(
        accelerator="cpu",
        max_epochs=1,
        limit_train_batches=1,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        default_root_dir=root,
        callbacks=[Watch()],
    )
    with quiet_lightning(framework):
        trainer.fit(Model(), loader, loader)
    return seen


def test_the_sanity_check_end_hook_sees_the_checks_values(tmp_path: Path) -> None:
    ours = _seen(accelplug, tmp_path / "a")
    assert ours == _seen(lightning, tmp_path / "l")
    assert ours == [("sanity_end", True, ["val"]), ("train_start", [])]
