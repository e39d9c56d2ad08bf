"""The batch-transfer hooks a LightningDataModule writes are the ones called, as in Lightning 2.6.6.

``on_before_batch_transfer``, ``transfer_batch_to_device`` and ``on_after_batch_transfer`` may be written on the
datamodule instead of the module: the datamodule's then runs for every batch of every stage; where both write one,
the datamodule's wins and a warning says the module's is not called.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader

from accelplug import LightningDataModule, Trainer
from accelplug.demos.boring_classes import BoringModel, RandomDataset


class _DictData(RandomDataset):
    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        return {"x": self.data[index], "unused": torch.ones(1)}


class _UnpackingData(LightningDataModule):
    """Its batches are dicts; its ``on_before_batch_transfer`` hands the steps the tensor alone."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def train_dataloader(self) -> DataLoader[Any]:
        return DataLoader(_DictData(32, 4), batch_size=2)

    def val_dataloader(self) -> DataLoader[Any]:
        return DataLoader(_DictData(32, 2), batch_size=2)

    def on_before_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
        self.calls.append("before")
        return batch["x"]

    def transfer_batch_to_device(self, batch: Any, device: torch.device, dataloader_idx: int) -> Any:
        self.calls.append("transfer")
        return super().transfer_batch_to_device(batch, device, dataloader_idx)

    def on_after_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
        self.calls.append("after")
        return batch


def _trainer(tmp_path: Path) -> Trainer:
    return Trainer(
        default_root_dir=tmp_path,
        max_epochs=1,
        num_sanity_val_steps=0,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )


@pytest.mark.filterwarnings(r"ignore:The number of training batches \(2\) is smaller than the logging interval")
def test_the_datamodules_transfer_hooks_run_for_every_batch(tmp_path: Path) -> None:
    data = _UnpackingData()
    _trainer(tmp_path).fit(BoringModel(), datamodule=data)
    # two training batches, one validation batch: each through the three hooks, in order
    assert data.calls == ["before", "transfer", "after"] * 3


@pytest.mark.filterwarnings(r"ignore:The number of training batches \(2\) is smaller than the logging interval")
def test_a_transfer_hook_written_on_both_is_the_datamodules_with_a_warning(tmp_path: Path) -> None:
    class AlsoUnpacks(BoringModel):
        def on_before_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
            raise AssertionError("the datamodule's hook is the one called")

    data = _UnpackingData()
    with pytest.warns(UserWarning, match="overridden `on_before_batch_transfer` in both"):
        _trainer(tmp_path).fit(AlsoUnpacks(), datamodule=data)
    assert data.calls.count("before") == 3


@pytest.mark.filterwarnings(r"ignore:The number of training batches \(2\) is smaller than the logging interval")
def test_a_datamodule_hook_that_only_wraps_the_default_leaves_the_modules_hook_in_charge(tmp_path: Path) -> None:
    # A recorder that wraps the base class's default (functools.partial + update_wrapper, as hook-recording test
    # helpers do) writes no hook of its own: Lightning's is_overridden sees through it, and so does accelplug.
    import functools

    class Recording(LightningDataModule):
        def __init__(self) -> None:
            super().__init__()
            self.recorded: list[str] = []
            default = self.on_before_batch_transfer

            def record(batch: Any, dataloader_idx: int) -> Any:
                self.recorded.append("before")
                return default(batch, dataloader_idx)

            wrapper = functools.partial(record)
            functools.update_wrapper(wrapper, default)
            self.on_before_batch_transfer = wrapper  # type: ignore[method-assign]

        def train_dataloader(self) -> DataLoader[Any]:
            return DataLoader(RandomDataset(32, 4), batch_size=2)

    class Unpacks(BoringModel):
        seen = 0

        def on_before_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
            self.seen += 1
            return batch

    data, model = Recording(), Unpacks()
    with pytest.warns(UserWarning, match="in `LightningModule` and passed a LightningDataModule that does not"):
        _trainer(tmp_path).fit(model, datamodule=data)
    assert model.seen > 0
    assert data.recorded == []
