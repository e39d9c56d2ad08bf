"""A LightningCLI training script, written for the CLI parity test (tests/lightning_compat/test_lightning_cli.py).

The test runs it as it is (Lightning) and with its imports swapped to accelplug, with the same arguments, and
compares what it writes to results.json. ``CLI_MODE`` picks the form: ``subcommands`` (the default),
``no_run`` (``run=False``, then ``cli.trainer.fit``) or ``subclass`` (``subclass_mode_model=True``).
"""

import json
import os

import torch
from lightning.pytorch import LightningDataModule, LightningModule
from lightning.pytorch.cli import LightningCLI
from torch.utils.data import DataLoader, TensorDataset

MODE = os.environ.get("CLI_MODE", "subcommands")


class Net(LightningModule):
    def __init__(self, hidden: int = 4, out_dim: int = 1):
        super().__init__()
        self.save_hyperparameters()
        self.layers = torch.nn.Sequential(torch.nn.Linear(3, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, out_dim))

    def forward(self, x):
        return self.layers(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


class ScaledNet(Net):
    def __init__(self, hidden: int = 6, out_dim: int = 1, scale: float = 1.0):
        super().__init__(hidden, out_dim)
        self.scale = scale

    def forward(self, x):
        return self.layers(x) * self.scale


class Data(LightningDataModule):
    def __init__(self, batch_size: int = 8, targets: int = 1):
        super().__init__()
        self.batch_size = batch_size
        self.targets = targets

    def _loader(self, seed):
        x = torch.randn(32, 3, generator=torch.Generator().manual_seed(seed))
        y = x.sum(1, keepdim=True).repeat(1, self.targets)
        return DataLoader(TensorDataset(x, y), batch_size=self.batch_size)

    def train_dataloader(self):
        return self._loader(0)

    def val_dataloader(self):
        return self._loader(1)


class CLI(LightningCLI):
    def add_arguments_to_parser(self, parser):
        target = "model.init_args.out_dim" if MODE == "subclass" else "model.out_dim"
        parser.link_arguments("data.targets", target)
        parser.set_defaults({"trainer.max_epochs": 2, "trainer.enable_progress_bar": False})


def report(cli):
    trainer = cli.trainer
    optimizer = trainer.optimizers[0]
    schedulers = [type(config.scheduler).__name__ for config in trainer.lr_scheduler_configs]
    weights = sum(float(p.detach().double().abs().sum()) for p in cli.model.parameters())
    with open("results.json", "w") as f:
        json.dump(
            {
                "model": type(cli.model).__name__,
                "hparams": dict(cli.model.hparams),
                "scale": getattr(cli.model, "scale", None),
                "batch_size": cli.datamodule.batch_size,
                "global_step": trainer.global_step,
                "optimizer": type(optimizer).__name__,
                "lr": optimizer.param_groups[0]["lr"],
                "schedulers": schedulers,
                "weights": weights,
                "callbacks": sorted(type(c).__name__ for c in trainer.callbacks if "Config" in type(c).__name__),
            },
            f,
        )


class ReportingCLI(CLI):
    def after_fit(self):
        report(self)


if __name__ == "__main__":
    if MODE == "no_run":
        cli = CLI(Net, Data, run=False, seed_everything_default=7)
        cli.trainer.fit(cli.model, datamodule=cli.datamodule)
        report(cli)
    elif MODE == "subclass":
        ReportingCLI(Net, Data, subclass_mode_model=True, seed_everything_default=7)
    else:
        ReportingCLI(Net, Data, seed_everything_default=7)
