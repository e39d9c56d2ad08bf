"""When a step-interval scheduler steps: its ``frequency`` counts the epoch's batches, as in Lightning 2.6.

Lightning steps a scheduler of ``"interval": "step"`` after a batch whose optimizers stepped when that batch's index
in its epoch, plus one, is a multiple of the ``frequency``: the count starts again with each epoch, and with gradient
accumulation it is the batch's index, not the number of optimizer steps. Each case fits both frameworks and compares
the learning rate seen after every batch.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from tests.callbacks.parity import FRAMEWORKS, quiet_lightning


def _halvings_after_each_batch(
    framework: Any, tmp_path: Path, *, frequency: int, accumulate: int, batches: int, plateau: bool = False
) -> list[int]:
    """How many times the learning rate was halved, read after each training batch of a 2-epoch fit."""
    seen: list[int] = []

    class Module(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            loss = torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1])
            self.log("watched", loss)
            return loss

        def configure_optimizers(self) -> Any:
            optimizer = torch.optim.SGD(self.parameters(), lr=1.0)
            if plateau:  # a threshold no loss meets: every check counts as no improvement and halves the rate
                scheduler: Any = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=0, threshold=1e9)
                config = {"scheduler": scheduler, "monitor": "watched"}
            else:
                config = {"scheduler": torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.5)}
            config.update(interval="step", frequency=frequency)
            return {"optimizer": optimizer, "lr_scheduler": config}

        def on_train_batch_end(self, *args: Any) -> None:
            lr = self.trainer.optimizers[0].param_groups[0]["lr"]
            seen.append(round(math.log(1.0 / lr, 1.0 / (0.1 if plateau else 0.5))))

    data = DataLoader(TensorDataset(torch.randn(batches * 2, 2), torch.randn(batches * 2, 1)), batch_size=2)
    trainer = framework.Trainer(
        default_root_dir=tmp_path,
        max_epochs=2,
        accumulate_grad_batches=accumulate,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    with quiet_lightning(framework):
        trainer.fit(Module(), data)
    return seen


@pytest.mark.parametrize(
    ("frequency", "accumulate", "batches", "plateau"),
    [
        (2, 1, 3, False),  # an odd epoch: the count starts again with the second epoch
        (2, 2, 4, False),  # with accumulation: the batch index, so every optimizer step here
        (3, 1, 4, False),
        (2, 1, 3, True),  # ReduceLROnPlateau at step interval: the same count
    ],
)
def test_a_step_interval_frequency_counts_the_batches_of_the_epoch(
    tmp_path: Path, frequency: int, accumulate: int, batches: int, plateau: bool
) -> None:
    seen = {
        name: _halvings_after_each_batch(
            framework, tmp_path / name, frequency=frequency, accumulate=accumulate, batches=batches, plateau=plateau
        )
        for name, framework in FRAMEWORKS.items()
    }
    assert seen["accelplug"] == seen["lightning"]
    assert seen["accelplug"][-1] > 0  # the scheduler did step
