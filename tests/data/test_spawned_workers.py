"""A loader whose workers start by ``spawn`` without ``persistent_workers=True`` gets Lightning 2.6's advice, in a
fit and in an evaluation (named after the loader's hook); one that keeps its workers, or forks them, gets none."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from accelplug.data.workers import warn_spawned_workers

_ADVICE = "Consider setting `persistent_workers=True` in 'val_dataloader' to speed up the dataloader worker"


def _loader(**options: Any) -> DataLoader[Any]:
    return DataLoader(TensorDataset(torch.randn(4, 2)), batch_size=2, **options)


@pytest.mark.parametrize(
    ("options", "advised"),
    [
        ({"num_workers": 1, "multiprocessing_context": "spawn"}, True),
        ({"num_workers": 1, "multiprocessing_context": "spawn", "persistent_workers": True}, False),
        ({"num_workers": 1, "multiprocessing_context": "fork"}, False),
        ({"num_workers": 0}, False),
    ],
    ids=["spawn", "persistent", "fork", "no-workers"],
)
def test_spawned_workers_are_advised_to_persist(options: dict[str, Any], advised: bool) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_spawned_workers([_loader(**options)], "val_dataloader")
    assert any(_ADVICE in str(w.message) for w in caught) is advised


def test_a_fit_advises_for_its_training_loader(tmp_path: Path) -> None:
    class Model(accelplug.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            out: torch.Tensor = self.layer(batch[0]).mean()
            return out

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    trainer = accelplug.Trainer(
        accelerator="cpu",
        max_steps=1,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        default_root_dir=tmp_path,
        limit_train_batches=0,
    )
    loader = _loader(num_workers=1, multiprocessing_context="spawn")
    with pytest.warns(UserWarning, match="persistent_workers=True` in 'train_dataloader'"):
        trainer.fit(Model(), loader)
