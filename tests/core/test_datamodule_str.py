"""``str(datamodule)``: one line per stage's loaders with their datasets' sizes, as Lightning 2.6 prints it."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, IterableDataset, TensorDataset

import accelplug

lightning = pytest.importorskip("lightning", reason="compared with Lightning's str(), not installed here")


class _Stream(IterableDataset[torch.Tensor]):
    def __iter__(self) -> Any:
        return iter([torch.zeros(1)])


def _datamodule(framework: Any) -> Any:
    class Data(framework.LightningDataModule):  # type: ignore[misc, name-defined]
        def train_dataloader(self) -> Any:
            return DataLoader(TensorDataset(torch.zeros(32, 2)), batch_size=4)

        def val_dataloader(self) -> Any:
            return [DataLoader(TensorDataset(torch.zeros(8, 2))), DataLoader(_Stream())]

        def test_dataloader(self) -> Any:
            raise RuntimeError("setup() has not run")

    return Data()


def test_str_lists_each_stages_loaders_as_lightnings() -> None:
    ours, theirs = str(_datamodule(accelplug)), str(_datamodule(lightning.pytorch))
    assert ours == theirs
    assert ours.splitlines()[0] == "{Train dataloader: size=32}"
    assert "{Validation dataloader: 1. size=8 ; 2. size=NA}" in ours
    assert "{Test dataloader: None}" in ours
