"""A ``DataLoader`` subclass made in a ``*_dataloader()`` method is made again with the arguments its constructor got
when a sharding sampler goes in, also those it keeps under no attribute of their name (as Lightning 2.6 does)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, DistributedSampler, SequentialSampler, TensorDataset

import accelplug
from accelplug.data._made_with import made_with, recording_arguments
from accelplug.data.loaders import rebuild_loader
from accelplug.errors import MisconfigurationException


class _Features(DataLoader):  # type: ignore[type-arg]
    def __init__(self, num_features: int, dataset: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(dataset, *args, **kwargs)  # num_features kept nowhere, on purpose


def test_the_arguments_a_loader_got_make_it_again() -> None:
    own_init = _Features.__init__
    with recording_arguments():
        loader = _Features(3, list(range(8)), batch_size=2, drop_last=True)
    assert _Features.__init__ is own_init  # the class is as it was
    assert made_with(loader) == {"num_features": 3, "dataset": list(range(8)), "batch_size": 2, "drop_last": True}
    rebuilt = rebuild_loader(loader, sampler=SequentialSampler(range(8)))
    assert type(rebuilt) is _Features and rebuilt.batch_size == 2 and rebuilt.drop_last
    outside = _Features(3, list(range(8)), batch_size=2)
    assert made_with(outside) is None
    with pytest.raises(MisconfigurationException, match="num_features"):
        rebuild_loader(outside, sampler=SequentialSampler(range(8)))


def test_a_sharded_loader_subclass_from_a_loader_method_keeps_its_class(tmp_path: Path) -> None:
    seen: list[Any] = []

    class Model(accelplug.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def test_step(self, batch: Any, batch_idx: int) -> None:
            seen.append(type(self.trainer.test_dataloaders))

        def test_dataloader(self) -> Any:
            return _Features(2, TensorDataset(torch.randn(8, 2)), batch_size=2)

    trainer = accelplug.Trainer(
        accelerator="cpu",
        devices=1,
        strategy="ddp",
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=tmp_path,
        limit_test_batches=1,
    )
    trainer.test(Model())
    loader = trainer.test_dataloaders
    assert type(loader) is _Features and isinstance(loader.sampler, DistributedSampler)
