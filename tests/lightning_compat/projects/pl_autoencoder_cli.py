"""Lightning's own example: an MNIST autoencoder under LightningCLI(run=False), tested and predicting from "best".

Source:    Lightning-AI/pytorch-lightning at commit 215acdc3efa4b096c80ab2d0263cab20d2f06f54
           (https://github.com/Lightning-AI/pytorch-lightning), examples/pytorch/basics/autoencoder.py
Licence:   Apache-2.0 (Copyright The Lightning AI team)
Written:   for this test after reading the source, not copied. Every call into Lightning is as the
           example makes it: ``from lightning.pytorch import LightningDataModule, LightningModule, Trainer,
           callbacks, cli_lightning_logo``, LightningCLI, rank_zero_only, _TORCHVISION_AVAILABLE, a
           callbacks.Callback subclass whose rank_zero_only on_train_epoch_end reads trainer.datamodule and
           trainer.current_epoch and runs pl_module in eval mode, save_hyperparameters(), self.hparams,
           training/validation/test/predict steps with self.log(on_step=True), a LightningDataModule built in
           __init__, LightningCLI(LitAutoEncoder, MyDataModule, seed_everything_default=1234, run=False,
           trainer_defaults={"callbacks": ImageSampler(), "max_epochs": 10},
           save_config_kwargs={"overwrite": True}), cli.trainer.fit(cli.model, datamodule=cli.datamodule),
           cli.trainer.test(ckpt_path="best", ...) and cli.trainer.predict(ckpt_path="best", ...).
Changes:   - lightning.pytorch.demos.mnist_datamodule.MNIST downloads MNIST: replaced by the synthetic MNIST
             of _synthetic.py; the split [55000, 5000] -> [512, 128].
           - torchvision is not installed here, so ``_TORCHVISION_AVAILABLE`` (imported from Lightning as the
             example does) is False and the example's callback would refuse to start: torchvision's
             make_grid, save_image and transforms.ToTensor are the stand-ins of _synthetic.py, and the
             example's two ``_TORCHVISION_AVAILABLE`` checks read ``_STANDINS_AVAILABLE`` (True) instead.
           - the runner passes ``--trainer.max_epochs=2``; added: the last lines write results.json.
Exercises: LightningCLI with run=False, a callback given through trainer_defaults, test and predict from
           ckpt_path="best" (the checkpoint ModelCheckpoint kept without a monitor), trainer.predict's
           returned list, config.yaml written by the CLI, PNG files a callback writes each epoch.
"""

from os import path
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from _synthetic import MNIST, ToTensor, make_grid, report, save_image, weights_digest
from lightning.pytorch import LightningDataModule, LightningModule, Trainer, callbacks, cli_lightning_logo
from lightning.pytorch.cli import LightningCLI
from lightning.pytorch.utilities import rank_zero_only
from lightning.pytorch.utilities.imports import _TORCHVISION_AVAILABLE
from torch import nn
from torch.utils.data import DataLoader, random_split

# torchvision's pieces the example uses, from the stand-ins (see the header)
torchvision = SimpleNamespace(utils=SimpleNamespace(make_grid=make_grid))
transforms = SimpleNamespace(ToTensor=ToTensor)
_STANDINS_AVAILABLE = True

DATASETS_PATH = path.join(path.dirname(__file__), "..", "..", "Datasets")


class ImageSampler(callbacks.Callback):
    def __init__(
        self,
        num_samples: int = 3,
        nrow: int = 8,
        padding: int = 2,
        normalize: bool = True,
        norm_range: tuple[int, int] | None = None,
        scale_each: bool = False,
        pad_value: int = 0,
    ) -> None:
        if not _STANDINS_AVAILABLE:  # pragma: no cover
            raise ModuleNotFoundError("You want to use `torchvision` which is not installed yet.")
        super().__init__()
        self.num_samples = num_samples
        self.nrow = nrow
        self.padding = padding
        self.normalize = normalize
        self.norm_range = norm_range
        self.scale_each = scale_each
        self.pad_value = pad_value

    def _to_grid(self, images):
        return torchvision.utils.make_grid(
            tensor=images,
            nrow=self.nrow,
            padding=self.padding,
            normalize=self.normalize,
            value_range=self.norm_range,
            scale_each=self.scale_each,
            pad_value=self.pad_value,
        )

    @rank_zero_only
    def on_train_epoch_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if not _STANDINS_AVAILABLE:
            return
        images, _ = next(iter(DataLoader(trainer.datamodule.mnist_val, batch_size=self.num_samples)))
        flattened = images.view(images.size(0), -1)
        with torch.no_grad():
            pl_module.eval()
            generated = pl_module(flattened.to(pl_module.device))
            pl_module.train()
        if trainer.current_epoch == 0:
            save_image(self._to_grid(images), f"grid_ori_{trainer.current_epoch}.png")
        save_image(self._to_grid(generated.reshape(images.shape)), f"grid_generated_{trainer.current_epoch}.png")


class LitAutoEncoder(LightningModule):
    def __init__(self, hidden_dim: int = 64, learning_rate=10e-3):
        super().__init__()
        self.save_hyperparameters()
        self.encoder = nn.Sequential(nn.Linear(28 * 28, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, 3))
        self.decoder = nn.Sequential(nn.Linear(3, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, 28 * 28))

    def forward(self, x):
        return self.decoder(self.encoder(x))

    def training_step(self, batch, batch_idx):
        return self._common_step(batch, batch_idx, "train")

    def validation_step(self, batch, batch_idx):
        self._common_step(batch, batch_idx, "val")

    def test_step(self, batch, batch_idx):
        self._common_step(batch, batch_idx, "test")

    def predict_step(self, batch, batch_idx, dataloader_idx=None):
        return self(self._prepare_batch(batch))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.learning_rate)

    def _prepare_batch(self, batch):
        x, _ = batch
        return x.view(x.size(0), -1)

    def _common_step(self, batch, batch_idx, stage: str):
        x = self._prepare_batch(batch)
        loss = F.mse_loss(x, self(x))
        self.log(f"{stage}_loss", loss, on_step=True)
        return loss


class MyDataModule(LightningDataModule):
    def __init__(self, batch_size: int = 32):
        super().__init__()
        dataset = MNIST(DATASETS_PATH, train=True, download=True, transform=transforms.ToTensor())
        self.mnist_test = MNIST(DATASETS_PATH, train=False, download=True, transform=transforms.ToTensor())
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
        LitAutoEncoder,
        MyDataModule,
        seed_everything_default=1234,
        run=False,
        trainer_defaults={"callbacks": ImageSampler(), "max_epochs": 10},
        save_config_kwargs={"overwrite": True},
    )
    cli.trainer.fit(cli.model, datamodule=cli.datamodule)
    test = cli.trainer.test(ckpt_path="best", datamodule=cli.datamodule)
    predictions = cli.trainer.predict(ckpt_path="best", datamodule=cli.datamodule)
    print(predictions[0])
    report(
        test=test,
        epochs=cli.trainer.current_epoch,
        global_step=cli.trainer.global_step,
        best=path.relpath(cli.trainer.checkpoint_callback.best_model_path),
        predictions=[list(p.shape) for p in predictions],
        prediction_sum=float(sum(p.double().sum() for p in predictions)),
        weights=weights_digest(cli.model),
        # Lightning's CLI also saves "_instantiator" (for load_from_checkpoint through jsonargparse); accelplug's
        # does not yet: the runner compares the hyper-parameters the module itself saved
        hparams={k: v for k, v in cli.model.hparams.items() if k != "_instantiator"},
        instantiator=cli.model.hparams.get("_instantiator"),
        torchvision_available=bool(_TORCHVISION_AVAILABLE),
    )


if __name__ == "__main__":
    cli_lightning_logo()
    cli_main()
