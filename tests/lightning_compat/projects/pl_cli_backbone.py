"""Lightning's own example: an MNIST backbone classifier driven by LightningCLI.

Source:    Lightning-AI/pytorch-lightning at commit 7f0c3436cd3f6ad3753125672024fc415cbcb414
           (https://github.com/Lightning-AI/pytorch-lightning),
           examples/pytorch/basics/backbone_image_classifier.py
Licence:   Apache-2.0 (Copyright The Lightning AI team)
Written:   for this test after reading the source, not copied. Every call into Lightning is as the
           example makes it: the imports, save_hyperparameters(ignore=["backbone"]), self.log with on_epoch /
           on_step, predict_step, LightningCLI(LitClassifier, MyDataModule, seed_everything_default=1234,
           save_config_kwargs={"overwrite": True}, run=False), cli.trainer.fit(cli.model,
           datamodule=cli.datamodule), cli.trainer.test(ckpt_path="best", ...), cli.trainer.predict(
           ckpt_path="best", ...), cli_lightning_logo.
Changes:   - lightning.pytorch.demos.mnist_datamodule.MNIST downloads MNIST and torchvision's ToTensor:
             replaced by the stand-ins in _synthetic.py; the 55000/5000 split -> 512/128.
           - the runner passes ``--trainer.max_epochs=2`` (the example's docstring runs it with
             ``--trainer.max_epochs=50``).
           - added: the last lines write results.json for the runner.
Exercises: LightningCLI (jsonargparse) with run=False, the config file it saves, a module whose backbone
           argument is an nn.Module left out of the hyper-parameters, test and predict from "best".
"""

from os import path

import torch
from _synthetic import MNIST, ToTensor, report, weights_digest
from lightning.pytorch import LightningDataModule, LightningModule, cli_lightning_logo
from lightning.pytorch.cli import LightningCLI
from torch.nn import functional as F
from torch.utils.data import DataLoader, random_split

DATASETS_PATH = path.join(path.dirname(__file__), "Datasets")


class Backbone(torch.nn.Module):
    def __init__(self, hidden_dim=128):
        super().__init__()
        self.l1 = torch.nn.Linear(28 * 28, hidden_dim)
        self.l2 = torch.nn.Linear(hidden_dim, 10)

    def forward(self, x):
        x = torch.relu(self.l1(x.view(x.size(0), -1)))
        return torch.relu(self.l2(x))


class LitClassifier(LightningModule):
    def __init__(self, backbone: Backbone | None = None, learning_rate: float = 0.0001):
        super().__init__()
        self.save_hyperparameters(ignore=["backbone"])
        if backbone is None:
            backbone = Backbone()
        self.backbone = backbone

    def forward(self, x):
        return self.backbone(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss, on_epoch=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("valid_loss", F.cross_entropy(self(x), y), on_step=True)

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.log("test_loss", F.cross_entropy(self(x), y))

    def predict_step(self, batch, batch_idx, dataloader_idx=None):
        x, _ = batch
        return self(x)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.learning_rate)


class MyDataModule(LightningDataModule):
    def __init__(self, batch_size: int = 32):
        super().__init__()
        dataset = MNIST(DATASETS_PATH, train=True, download=True, transform=ToTensor())
        self.mnist_test = MNIST(DATASETS_PATH, train=False, download=True, transform=ToTensor())
        self.mnist_train, self.mnist_val = random_split(
            dataset, [512, 128], generator=torch.Generator().manual_seed(42)
        )
        self.batch_size = batch_size

    def train_dataloader(self):
        return DataLoader(self.mnist_train, batch_size=self.batch_size)

    def val_dataloader(self):
        return DataLoader(self.mnist_val, batch_size=self.batch_size)

    def test_dataloader(self):
        return DataLoader(self.mnist_test, batch_size=self.batch_size)

    def predict_dataloader(self):
        return DataLoader(self.mnist_test, batch_size=self.batch_size)


def cli_main():
    cli = LightningCLI(
        LitClassifier, MyDataModule, seed_everything_default=1234, save_config_kwargs={"overwrite": True}, run=False
    )
    cli.trainer.fit(cli.model, datamodule=cli.datamodule)
    test_results = cli.trainer.test(ckpt_path="best", datamodule=cli.datamodule)
    predictions = cli.trainer.predict(ckpt_path="best", datamodule=cli.datamodule)
    print(predictions[0])
    report(
        test=test_results[0],
        epochs=cli.trainer.current_epoch,
        predictions=[len(predictions), list(predictions[0].shape)],
        prediction_sum=float(torch.cat(predictions).abs().sum()),
        weights=weights_digest(cli.model),
    )


if __name__ == "__main__":
    cli_lightning_logo()
    cli_main()
