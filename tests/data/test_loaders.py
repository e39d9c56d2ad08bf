"""This process's view of a loader: rebuilt with one setting changed, every other setting of the user's kept.

``pin_memory`` is one of the user's settings: Lightning 2.6 never changes it, and neither does accelplug, also when
the batches go to a CUDA device (a dataset that already holds CUDA tensors cannot be pinned).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from accelplug.data.loaders import prepare_loader, with_distributed_sampler
from tests.modules import regression_data


class _Sharding:
    """What ``prepare_loader`` asks of a strategy: here two processes, this one rank 1 (no process group needed)."""

    is_distributed = True
    global_rank = 1

    def prepare_dataloader(self, loader: Any, *, shuffle_seed: int, shuffle: bool | None = None) -> Any:
        return with_distributed_sampler(loader, 2, 1, shuffle_seed, shuffle=shuffle)

    def process_dataloader(self, loader: Any) -> Any:
        return loader


@pytest.mark.parametrize("pinned", [False, True])
def test_a_loader_for_a_cuda_device_keeps_the_users_pin_memory(pinned: bool) -> None:
    # the device is what the decision would consult; building the loaders touches no GPU
    loader = DataLoader(regression_data().dataset, batch_size=8, pin_memory=pinned)
    prepared = prepare_loader(loader, torch.device("cuda", 0), _Sharding(), distributed_sampler=True, seed=0)
    assert prepared is not loader  # rebuilt around the distributed sampler...
    assert prepared.pin_memory is pinned  # ...with the user's pin_memory
    assert prepared.sampler.rank == 1


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU with a CUDA build of torch")
def test_a_loader_over_cuda_tensors_fits_on_the_gpu_as_in_lightning(tmp_path: Path) -> None:
    lightning = pytest.importorskip("lightning", reason="compared against lightning, not installed here")
    from tests.callbacks.parity import quiet_lightning

    x = torch.randn(32, 3, generator=torch.Generator().manual_seed(0)).cuda()
    weights = {}
    for framework in (accelplug, lightning):

        class Regression(framework.LightningModule):  # type: ignore[misc, name-defined]
            def __init__(self) -> None:
                super().__init__()
                torch.manual_seed(0)
                self.layer = torch.nn.Linear(3, 1)

            def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
                return self.layer(batch[0]).pow(2).mean()

            def configure_optimizers(self) -> Any:
                return torch.optim.SGD(self.parameters(), lr=0.1)

        module = Regression()
        loader = DataLoader(TensorDataset(x), batch_size=8)  # the dataset's tensors are on the GPU already
        trainer = framework.Trainer(
            accelerator="cuda",
            devices=1,
            max_epochs=2,
            logger=False,
            enable_progress_bar=False,
            enable_checkpointing=False,
            enable_model_summary=False,
            default_root_dir=tmp_path / framework.__name__,
        )
        with quiet_lightning(framework):
            trainer.fit(module, loader)
        assert not loader.pin_memory
        weights[framework.__name__] = module.layer.weight.detach().cpu()
    torch.testing.assert_close(weights["accelplug"], weights["lightning"])


class _Counting(torch.utils.data.IterableDataset[torch.Tensor]):
    def __iter__(self) -> Any:
        return iter(torch.arange(8).float().unsqueeze(1))

    def __len__(self) -> int:
        return 8


def test_prediction_reads_a_batched_iterable_dataset_as_it_comes(tmp_path: Path) -> None:
    # an IterableDataset has no sampler to make sequential; Lightning predicts on it as it is
    class Doubling(accelplug.LightningModule):
        def predict_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
            return batch * 2

    trainer = accelplug.Trainer(accelerator="cpu", logger=False, enable_progress_bar=False, default_root_dir=tmp_path)
    with pytest.warns(UserWarning, match="Your `IterableDataset` has `__len__` defined"):
        predictions = trainer.predict(Doubling(), DataLoader(_Counting(), batch_size=4))
    assert [p.squeeze(1).tolist() for p in predictions] == [[0, 2, 4, 6], [8, 10, 12, 14]]  # type: ignore[union-attr]
