"""``seed_everything(seed, workers=True)``: DataLoader workers seeded as Lightning seeds them, draw for draw."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, Dataset

import accelplug
from accelplug.data.workers import add_worker_seeding, worker_init_function
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the seeds are compared with lightning's, not installed here")


def _draws() -> tuple[float, float, float]:
    return float(torch.rand(1)), random.random(), float(np.random.rand())


@pytest.mark.parametrize("base", [1234, 8087222774582268115])  # torch draws 63-bit base seeds
@pytest.mark.parametrize(("worker_id", "rank"), [(0, 0), (1, 0), (3, 2)])
def test_a_worker_draws_what_it_draws_under_lightnings_init_function(base: int, worker_id: int, rank: int) -> None:
    from lightning.fabric.utilities.seed import pl_worker_init_function

    torch.manual_seed(base + worker_id)  # what torch does in worker ``worker_id`` of a loader seeded ``base``
    pl_worker_init_function(worker_id, rank=rank)
    expected = _draws()
    torch.manual_seed(base + worker_id)
    worker_init_function(worker_id, rank=rank)
    assert _draws() == expected


class Noisy(Dataset[torch.Tensor]):
    """Each sample is drawn from the three generators inside the worker (as random augmentations are)."""

    def __len__(self) -> int:
        return 8

    def __getitem__(self, index: int) -> torch.Tensor:
        return torch.tensor([torch.rand(1).item(), random.random(), float(np.random.rand())])


def _fit_and_record(framework: Any) -> list[list[float]]:
    seen: list[list[float]] = []

    class Recorder(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(3, 1)

        def training_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
            seen.extend(batch.tolist())
            return self.layer(batch).sum()

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    framework.seed_everything(7, workers=True, verbose=False)
    trainer = framework.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    with quiet_lightning():  # only Lightning's own warnings
        trainer.fit(Recorder(), DataLoader(Noisy(), batch_size=2, num_workers=2))
    return seen


def test_a_fit_with_seeded_workers_sees_lightnings_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PL_SEED_WORKERS", "0")  # restored after; seed_everything sets it
    expected = _fit_and_record(lightning)
    assert _fit_and_record(accelplug) == expected
    assert len({tuple(row) for row in expected}) == 8  # the workers did not repeat each other's draws


def test_a_loaders_own_worker_init_fn_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    def own(worker_id: int) -> None:
        pass

    monkeypatch.setenv("PL_SEED_WORKERS", "1")
    loader = DataLoader(Noisy(), num_workers=1, worker_init_fn=own)
    assert add_worker_seeding(loader, 0).worker_init_fn is own
    bare = add_worker_seeding(DataLoader(Noisy(), num_workers=1), 3)
    assert bare.worker_init_fn.keywords == {"rank": 3}
    monkeypatch.setenv("PL_SEED_WORKERS", "0")
    assert add_worker_seeding(DataLoader(Noisy()), 0).worker_init_fn is None
