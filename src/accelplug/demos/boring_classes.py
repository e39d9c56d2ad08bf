"""The small models and datasets of Lightning bug reports and tests (``lightning.pytorch.demos.boring_classes``).

Every Lightning issue template starts from ``BoringModel``: a 32 -> 2 linear layer trained on random vectors
towards all-ones with mean squared error, SGD at lr 0.1 and a step scheduler, and four loaders of 64 random
vectors each. These behave as Lightning's do, draw for draw: each dataset draws its values with
``torch.randn`` when built (so one seed gives the same data), and the module's layer is created first (so one
seed gives the same weights). They are for tests and reproductions, not for training anything real.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
import torch.nn.functional as F
from lightning_utilities.core.apply_func import apply_to_collection
from torch import Tensor, nn
from torch.utils.data import DataLoader, Dataset, IterableDataset, Subset

from ..core.datamodule import LightningDataModule
from ..core.module import LightningModule
from ..core.optimizer import LightningOptimizer

__all__ = [
    "BoringDataModule",
    "BoringDataModuleNoLen",
    "BoringModel",
    "DemoModel",
    "IterableBoringDataModule",
    "ManualOptimBoringModel",
    "Net",
    "RandomDataset",
    "RandomDictDataset",
    "RandomIterableDataset",
    "RandomIterableDatasetWithLen",
]


class RandomDataset(Dataset[Tensor]):
    """``length`` random vectors of ``size`` values, drawn once when the dataset is built."""

    def __init__(self, size: int, length: int) -> None:
        self.len = length
        self.data = torch.randn(length, size)

    def __getitem__(self, index: int) -> Tensor:
        return self.data[index]

    def __len__(self) -> int:
        return self.len


class RandomDictDataset(Dataset[dict[str, Tensor]]):
    """Like :class:`RandomDataset`, each item a dict: ``{"a": vector, "b": vector + 2}``."""

    def __init__(self, size: int, length: int) -> None:
        self.len = length
        self.data = torch.randn(length, size)

    def __getitem__(self, index: int) -> dict[str, Tensor]:
        vector = self.data[index]
        return {"a": vector, "b": vector + 2}

    def __len__(self) -> int:
        return self.len


class RandomIterableDataset(IterableDataset[Tensor]):
    """``count`` random vectors of ``size`` values, drawn as they are iterated; it has no length."""

    def __init__(self, size: int, count: int) -> None:
        self.count = count
        self.size = size

    def __iter__(self) -> Iterator[Tensor]:
        return (torch.randn(self.size) for _ in range(self.count))


class RandomIterableDatasetWithLen(IterableDataset[Tensor]):
    """:class:`RandomIterableDataset` that also tells its length (``count``)."""

    def __init__(self, size: int, count: int) -> None:
        self.count = count
        self.size = size

    def __iter__(self) -> Iterator[Tensor]:
        return (torch.randn(self.size) for _ in range(len(self)))

    def __len__(self) -> int:
        return self.count


def _loader(dataset: Dataset[Any]) -> DataLoader[Any]:
    return DataLoader(dataset)


class BoringModel(LightningModule):
    """A linear layer (32 -> 2) that any Trainer call runs on; subclass it and change what a test needs.

    The loss is the mean squared error to ones (or to ``labels``), so every step moves the weights. The steps
    return ``{"loss": ...}`` (training), ``{"x": ...}`` (validation) and ``{"y": ...}`` (test).
    """

    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.Linear(32, 2)

    def forward(self, x: Tensor) -> Tensor:
        out: Tensor = self.layer(x)
        return out

    def loss(self, preds: Tensor, labels: Tensor | None = None) -> Tensor:
        target = torch.ones_like(preds) if labels is None else labels
        return F.mse_loss(preds, target)

    def step(self, batch: Any) -> Tensor:
        return self.loss(self(batch))

    def training_step(self, batch: Any, batch_idx: int) -> Any:
        return {"loss": self.step(batch)}

    def validation_step(self, batch: Any, batch_idx: int) -> Any:
        return {"x": self.step(batch)}

    def test_step(self, batch: Any, batch_idx: int) -> Any:
        return {"y": self.step(batch)}

    def configure_optimizers(self) -> Any:
        optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
        return [optimizer], [torch.optim.lr_scheduler.StepLR(optimizer, step_size=1)]

    def train_dataloader(self) -> Any:
        return _loader(RandomDataset(32, 64))

    def val_dataloader(self) -> Any:
        return _loader(RandomDataset(32, 64))

    def test_dataloader(self) -> Any:
        return _loader(RandomDataset(32, 64))

    def predict_dataloader(self) -> Any:
        return _loader(RandomDataset(32, 64))


class ManualOptimBoringModel(BoringModel):
    """:class:`BoringModel` with manual optimization: each training step zeroes, backpropagates and steps."""

    def __init__(self) -> None:
        super().__init__()
        self.automatic_optimization = False

    def training_step(self, batch: Any, batch_idx: int) -> Any:
        optimizer = self.optimizers()
        assert isinstance(optimizer, (torch.optim.Optimizer, LightningOptimizer))
        loss = self.step(batch)
        optimizer.zero_grad()
        self.manual_backward(loss)
        optimizer.step()
        return loss


class BoringDataModule(LightningDataModule):
    """256 random vectors of 32 values (drawn when built), split into four quarters by stage in ``setup``:
    training, validation (also for ``validate``), test and predict, each a loader of 64."""

    def __init__(self) -> None:
        super().__init__()
        self.random_full = RandomDataset(32, 64 * 4)

    def _quarter(self, which: int) -> Subset[Tensor]:
        return Subset(self.random_full, indices=range(64 * which, 64 * (which + 1)))

    def setup(self, stage: str) -> None:
        if stage == "fit":
            self.random_train = self._quarter(0)
        if stage in ("fit", "validate"):
            self.random_val = self._quarter(1)
        if stage == "test":
            self.random_test = self._quarter(2)
        if stage == "predict":
            self.random_predict = self._quarter(3)

    def train_dataloader(self) -> Any:
        return _loader(self.random_train)

    def val_dataloader(self) -> Any:
        return _loader(self.random_val)

    def test_dataloader(self) -> Any:
        return _loader(self.random_test)

    def predict_dataloader(self) -> Any:
        return _loader(self.random_predict)


class BoringDataModuleNoLen(LightningDataModule):
    """Loaders over :class:`RandomIterableDataset` (no length): 512 training, 128 validation, 256 test and 64
    predict vectors of 32 values, made in ``setup`` for the stage."""

    def setup(self, stage: str) -> None:
        if stage == "fit":
            self.random_train = RandomIterableDataset(32, 512)
        if stage in ("fit", "validate"):
            self.random_val = RandomIterableDataset(32, 128)
        if stage == "test":
            self.random_test = RandomIterableDataset(32, 256)
        if stage == "predict":
            self.random_predict = RandomIterableDataset(32, 64)

    def train_dataloader(self) -> Any:
        return _loader(self.random_train)

    def val_dataloader(self) -> Any:
        return _loader(self.random_val)

    def test_dataloader(self) -> Any:
        return _loader(self.random_test)

    def predict_dataloader(self) -> Any:
        return _loader(self.random_predict)


class IterableBoringDataModule(LightningDataModule):
    """Each stage gets two loaders of vectors of 4 values, one with a length and one without: 16 each for
    training, 32 for validation, 64 for test, 128 for predict."""

    def setup(self, stage: str) -> None:
        def pair(count: int) -> list[Dataset[Tensor]]:
            return [RandomDataset(4, count), RandomIterableDataset(4, count)]

        if stage == "fit":
            self.train_datasets = pair(16)
        if stage in ("fit", "validate"):
            self.val_datasets = pair(32)
        if stage == "test":
            self.test_datasets = pair(64)
        if stage == "predict":
            self.predict_datasets = pair(128)

    @staticmethod
    def _loaders(datasets: list[Dataset[Tensor]]) -> Any:
        return apply_to_collection(datasets, Dataset, _loader)

    def train_dataloader(self) -> Any:
        return self._loaders(self.train_datasets)

    def val_dataloader(self) -> Any:
        return self._loaders(self.val_datasets)

    def test_dataloader(self) -> Any:
        return self._loaders(self.test_datasets)

    def predict_dataloader(self) -> Any:
        return self._loaders(self.predict_datasets)


class DemoModel(LightningModule):
    """A linear layer (32 -> ``out_dim``) and a ReLU, trained with Adam at ``learning_rate`` to minimise the sum
    of its outputs (the learning-rate finder's and the CLI's examples)."""

    def __init__(self, out_dim: int = 10, learning_rate: float = 0.02) -> None:
        super().__init__()
        self.l1 = nn.Linear(32, out_dim)
        self.learning_rate = learning_rate

    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.l1(x.view(x.size(0), -1)))

    def training_step(self, batch: Any, batch_nb: int) -> Any:
        return self(batch).sum()

    def configure_optimizers(self) -> Any:
        return torch.optim.Adam(self.parameters(), lr=self.learning_rate)


class Net(nn.Module):
    """The convolutional MNIST classifier of PyTorch's examples: 1x28x28 images in, 10 log-probabilities out."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x: Tensor) -> Tensor:
        features = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
        hidden = F.relu(self.fc1(torch.flatten(self.dropout1(features), 1)))
        return F.log_softmax(self.fc2(self.dropout2(hidden)), dim=1)
