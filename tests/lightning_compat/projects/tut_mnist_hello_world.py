"""The Lightning tutorials' first notebook, "Introduction to PyTorch Lightning" (MNIST hello world), as a script.

Source:    Lightning-AI/tutorials at commit 5157d0159ea29924920359c00840537f102633a4
           (https://github.com/Lightning-AI/tutorials), lightning_examples/mnist-hello-world/hello-world.py
Licence:   CC BY-SA (the notebook's .meta.yml: "license: CC BY-SA"; author: PL team)
Written:   for this test after reading the source, not copied. Every call into Lightning is as the
           notebook makes it: ``import lightning as L``, CSVLogger from lightning.pytorch.loggers, a minimal
           L.LightningModule fitted on a DataLoader with L.Trainer(accelerator, devices, max_epochs), then a
           module with prepare_data, setup(stage=None) splitting by stage, its own train/val/test dataloaders
           and torchmetrics Accuracy objects updated by hand and passed to self.log(prog_bar=True), fitted with
           L.Trainer(..., logger=CSVLogger(save_dir="logs/")), trainer.test(ckpt_path="best") without a model,
           a second trainer.fit(model) on the same Trainer, and pandas reading
           f"{trainer.logger.log_dir}/metrics.csv".
Changes:   - torchvision's MNIST and transforms -> the stand-ins of _synthetic.py; the split [55000, 5000] ->
             [512, 128] (the notebook seeds nothing, so the split and the values differ run to run: the
             runner compares what is deterministic and the names of the rest).
           - seaborn's plot and IPython's display of the metrics table left out (pandas still reads the CSV).
           - added: the last lines write results.json for the runner.
Exercises: the tutorial users start from: prepare_data/setup stages in a LightningModule, metric objects
           updated by hand then logged, test(ckpt_path="best") with no model, fit again after max_epochs,
           CSVLogger(save_dir=...) and its metrics.csv read back with pandas.
"""

import os
from dataclasses import dataclass

import lightning as L
import pandas as pd
import torch
from _synthetic import MNIST, Compose, Normalize, ToTensor, report
from lightning.pytorch.loggers import CSVLogger
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, random_split
from torchmetrics import Accuracy


class transforms:  # torchvision's module name, for the notebook's transforms.X calls
    Compose, Normalize, ToTensor = Compose, Normalize, ToTensor


@dataclass
class Config:
    """The notebook's settings (its docstring describes each)."""

    data_dir: str = os.environ.get("PATH_DATASETS", ".")
    save_dir: str = "logs/"
    batch_size: int = 256 if torch.cuda.is_available() else 64
    max_epochs: int = 3
    accelerator: str = "auto"
    devices: int = 1


config = Config()


class MNISTModel(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(28 * 28, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.l1(x.view(x.size(0), -1)))

    def training_step(self, batch, batch_nb: int) -> torch.Tensor:
        x, y = batch
        return F.cross_entropy(self(x), y)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=0.02)


mnist_model = MNISTModel()
train_ds = MNIST(config.data_dir, train=True, download=True, transform=transforms.ToTensor())
train_loader = DataLoader(train_ds, batch_size=config.batch_size)
trainer = L.Trainer(accelerator=config.accelerator, devices=config.devices, max_epochs=config.max_epochs)
trainer.fit(mnist_model, train_loader)
simple_steps = trainer.global_step


class LitMNIST(L.LightningModule):
    def __init__(self, data_dir: str = config.data_dir, hidden_size: int = 64, learning_rate: float = 2e-4):
        super().__init__()
        self.data_dir = data_dir
        self.hidden_size = hidden_size
        self.learning_rate = learning_rate

        self.num_classes = 10
        self.dims = (1, 28, 28)
        channels, width, height = self.dims
        self.transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])

        self.model = nn.Sequential(
            nn.Flatten(),
            nn.Linear(channels * width * height, hidden_size),
            nn.ReLU(),
            nn.Dropout(0.1),
            nn.Linear(hidden_size, hidden_size),
            nn.ReLU(),
            nn.Dropout(0.1),
            nn.Linear(hidden_size, self.num_classes),
        )
        self.val_accuracy = Accuracy(task="multiclass", num_classes=10)
        self.test_accuracy = Accuracy(task="multiclass", num_classes=10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.log_softmax(self.model(x), dim=1)

    def training_step(self, batch, batch_nb: int) -> torch.Tensor:
        x, y = batch
        return F.nll_loss(self(x), y)

    def validation_step(self, batch, batch_nb: int) -> None:
        x, y = batch
        logits = self(x)
        loss = F.nll_loss(logits, y)
        self.val_accuracy.update(torch.argmax(logits, dim=1), y)
        self.log("val_loss", loss, prog_bar=True)
        self.log("val_acc", self.val_accuracy, prog_bar=True)

    def test_step(self, batch, batch_nb: int) -> None:
        x, y = batch
        logits = self(x)
        loss = F.nll_loss(logits, y)
        self.test_accuracy.update(torch.argmax(logits, dim=1), y)
        self.log("test_loss", loss, prog_bar=True)
        self.log("test_acc", self.test_accuracy, prog_bar=True)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=self.learning_rate)

    def prepare_data(self) -> None:
        MNIST(self.data_dir, train=True, download=True)
        MNIST(self.data_dir, train=False, download=True)

    def setup(self, stage: str | None = None) -> None:
        if stage == "fit" or stage is None:
            mnist_full = MNIST(self.data_dir, train=True, transform=self.transform)
            self.mnist_train, self.mnist_val = random_split(mnist_full, [512, 128])
        if stage == "test" or stage is None:
            self.mnist_test = MNIST(self.data_dir, train=False, transform=self.transform)

    def train_dataloader(self) -> DataLoader:
        return DataLoader(self.mnist_train, batch_size=config.batch_size)

    def val_dataloader(self) -> DataLoader:
        return DataLoader(self.mnist_val, batch_size=config.batch_size)

    def test_dataloader(self) -> DataLoader:
        return DataLoader(self.mnist_test, batch_size=config.batch_size)


model = LitMNIST()
trainer = L.Trainer(
    accelerator=config.accelerator,
    devices=config.devices,
    max_epochs=config.max_epochs,
    logger=CSVLogger(save_dir=config.save_dir),
)
trainer.fit(model)
test = trainer.test(ckpt_path="best")
steps_after_first_fit = trainer.global_step
trainer.fit(model)

metrics = pd.read_csv(f"{trainer.logger.log_dir}/metrics.csv")
del metrics["step"]
metrics.set_index("epoch", inplace=True)

report(
    simple_steps=simple_steps,
    steps_after_first_fit=steps_after_first_fit,
    steps_after_second_fit=trainer.global_step,
    epoch=trainer.current_epoch,
    test_keys=sorted(test[0]),
    test=test,
    columns=sorted(metrics.columns),
    epochs_logged=sorted({int(e) for e in metrics.index}),
    rows=len(metrics),
    log_dir=os.path.relpath(trainer.logger.log_dir),
    best=os.path.relpath(trainer.checkpoint_callback.best_model_path),
)
