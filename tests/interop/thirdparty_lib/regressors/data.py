"""The library's data helpers, written against the other spelling, ``pytorch_lightning``."""

import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, TensorDataset


class LineData(pl.LightningDataModule):
    """Points on ``y = 3x - 1``."""

    def __init__(self, n: int = 64) -> None:
        super().__init__()
        generator = torch.Generator().manual_seed(0)
        self.x = torch.rand(n, 1, generator=generator)
        self.y = 3 * self.x - 1

    def train_dataloader(self) -> DataLoader:
        return DataLoader(TensorDataset(self.x, self.y), batch_size=16, shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return DataLoader(TensorDataset(self.x, self.y), batch_size=16)


def make_loaders() -> LineData:
    return LineData()
