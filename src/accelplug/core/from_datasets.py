"""``LightningDataModule.from_datasets``: loader methods over given datasets, and the arguments its
``__init__`` takes (Lightning's rules: ``batch_size``/``num_workers`` only where ``__init__`` accepts them)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from torch.utils.data import DataLoader, Dataset, IterableDataset

__all__ = ["loader_methods", "special_arguments"]


def special_arguments(cls: type, batch_size: int, num_workers: int) -> dict[str, Any]:
    candidates = {"batch_size": batch_size, "num_workers": num_workers}
    parameters = inspect.signature(cls).parameters  # the constructor's, without self
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return candidates
    return {k: v for k, v in candidates.items() if k in parameters}


def _over(datasets: Any, batch_size: int, num_workers: int, shuffle: bool) -> Any:
    """A DataLoader per dataset, keeping the list/dict shape the datasets came in."""
    if isinstance(datasets, Dataset):
        shuffled = shuffle and not isinstance(datasets, IterableDataset)
        return DataLoader(datasets, batch_size=batch_size, shuffle=shuffled, num_workers=num_workers, pin_memory=True)
    if isinstance(datasets, Mapping):
        return {k: _over(v, batch_size, num_workers, shuffle) for k, v in datasets.items()}
    if isinstance(datasets, (list, tuple)):
        return type(datasets)(_over(d, batch_size, num_workers, shuffle) for d in datasets)
    return datasets


def loader_methods(datasets: dict[str, Any], batch_size: int, num_workers: int) -> dict[str, Callable[[], Any]]:
    """``{"train": train_dataloader, ...}`` for each stage given a dataset (only the training loaders shuffle)."""

    def method(found: Any, shuffle: bool) -> Callable[[], Any]:
        return lambda: _over(found, batch_size, num_workers, shuffle)

    return {stage: method(found, stage == "train") for stage, found in datasets.items() if found is not None}
