"""Lightning's own example: a GAN on MNIST trained with manual optimization.

Source:    Lightning-AI/pytorch-lightning at commit 7f0c3436cd3f6ad3753125672024fc415cbcb414
           (https://github.com/Lightning-AI/pytorch-lightning),
           examples/pytorch/domain_templates/generative_adversarial_net.py; the data module after
           src/lightning/pytorch/demos/mnist_datamodule.py (MNISTDataModule)
Licence:   Apache-2.0 (Copyright The Lightning AI team)
Written:   for this test after reading the source, not copied. Every call into Lightning is as the
           example makes it: the imports, save_hyperparameters, automatic_optimization = False,
           example_input_array, training_step(self, batch) without batch_idx, self.optimizers() giving two
           optimizers, toggle_optimizer/untoggle_optimizer, manual_backward, log_dict, configure_optimizers
           returning a tuple of two optimizers, on_train_epoch_end writing generated images through every
           logger in self.loggers (logger.experiment.add_image), cli_lightning_logo, Trainer and fit(model, dm).
Changes:   - lightning.pytorch.demos.mnist_datamodule.MNISTDataModule downloads MNIST: replaced by the
             ``MNISTDataModule`` below (the demo's splits and loaders over the synthetic MNIST of
             _synthetic.py; num_workers 16 -> 0, val_split 5000 -> 128).
           - torchvision.utils.make_grid -> the stand-in in _synthetic.py.
           - ``Trainer(accelerator="gpu", devices=1)`` -> ``Trainer(accelerator="cpu", devices=args.devices,
             strategy=args.strategy, max_epochs=1)`` with two added arguments (defaults 1 and "auto"): the
             runner also runs the example as two CPU processes with
             ``--devices 2 --strategy ddp_find_unused_parameters_true``, the setting a GAN needs under DDP
             (the generator takes no part in the discriminator's loss). The example's own comment above
             its Trainer recommends DistributedDataParallel for more than one device.
           - sizes: latent_dim 100 -> 32, batch 32; added: the last lines write results.json for the runner.
Exercises: manual optimization with two optimizers, TensorBoard images via self.loggers, DDP with
           find_unused_parameters through the strategy string, a LightningDataModule from lightning.pytorch.
"""

import math
from argparse import ArgumentParser, Namespace

import torch
import torch.nn as nn
import torch.nn.functional as F
from _synthetic import MNIST, ToTensor, make_grid, report, weights_digest
from lightning.pytorch import LightningDataModule, cli_lightning_logo
from lightning.pytorch.core import LightningModule
from lightning.pytorch.trainer import Trainer
from torch.utils.data import DataLoader, random_split


class MNISTDataModule(LightningDataModule):
    """The demo data module's splits and loaders, over the synthetic MNIST."""

    name = "mnist"

    def __init__(
        self,
        data_dir: str = "Datasets",
        val_split: int = 128,
        num_workers: int = 0,
        normalize: bool = False,
        seed: int = 42,
        batch_size: int = 32,
    ) -> None:
        super().__init__()
        self.data_dir, self.val_split, self.num_workers = data_dir, val_split, num_workers
        self.normalize, self.seed, self.batch_size = normalize, seed, batch_size

    def prepare_data(self) -> None:
        MNIST(self.data_dir, train=True, download=True)

    def setup(self, stage: str) -> None:
        dataset = MNIST(self.data_dir, train=True, download=False, transform=ToTensor())
        self.dataset_train, self.dataset_val = random_split(
            dataset, [len(dataset) - self.val_split, self.val_split], generator=torch.Generator().manual_seed(42)
        )

    def train_dataloader(self) -> DataLoader:
        return DataLoader(
            self.dataset_train, batch_size=self.batch_size, shuffle=True, num_workers=self.num_workers, drop_last=True
        )

    def val_dataloader(self) -> DataLoader:
        return DataLoader(
            self.dataset_val, batch_size=self.batch_size, shuffle=False, num_workers=self.num_workers, drop_last=True
        )


class Generator(nn.Module):
    def __init__(self, latent_dim: int = 100, img_shape: tuple = (1, 28, 28)):
        super().__init__()
        self.img_shape = img_shape

        def block(in_feat, out_feat, normalize=True):
            layers = [nn.Linear(in_feat, out_feat)]
            if normalize:
                layers.append(nn.BatchNorm1d(out_feat, 0.8))
            layers.append(nn.LeakyReLU(0.2, inplace=True))
            return layers

        self.model = nn.Sequential(
            *block(latent_dim, 128, normalize=False),
            *block(128, 256),
            *block(256, 512),
            *block(512, 1024),
            nn.Linear(1024, int(math.prod(img_shape))),
            nn.Tanh(),
        )

    def forward(self, z):
        return self.model(z).view(z.size(0), *self.img_shape)


class Discriminator(nn.Module):
    def __init__(self, img_shape):
        super().__init__()
        self.model = nn.Sequential(
            nn.Linear(int(math.prod(img_shape)), 512),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(512, 256),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(256, 1),
        )

    def forward(self, img):
        return self.model(img.view(img.size(0), -1))


class GAN(LightningModule):
    def __init__(
        self,
        img_shape: tuple = (1, 28, 28),
        lr: float = 0.0002,
        b1: float = 0.5,
        b2: float = 0.999,
        latent_dim: int = 100,
    ):
        super().__init__()
        self.save_hyperparameters()
        self.automatic_optimization = False
        self.generator = Generator(latent_dim=self.hparams.latent_dim, img_shape=img_shape)
        self.discriminator = Discriminator(img_shape=img_shape)
        self.validation_z = torch.randn(8, self.hparams.latent_dim)
        self.example_input_array = torch.zeros(2, self.hparams.latent_dim)

    def forward(self, z):
        return self.generator(z)

    @staticmethod
    def adversarial_loss(y_hat, y):
        return F.binary_cross_entropy_with_logits(y_hat, y)

    def training_step(self, batch):
        imgs, _ = batch
        opt_g, opt_d = self.optimizers()
        z = torch.randn(imgs.shape[0], self.hparams.latent_dim).type_as(imgs)

        # the generator: make the discriminator call its images real
        valid = torch.ones(imgs.size(0), 1).type_as(imgs)
        self.toggle_optimizer(opt_g)
        g_loss = self.adversarial_loss(self.discriminator(self(z)), valid)
        opt_g.zero_grad()
        self.manual_backward(g_loss)
        opt_g.step()
        self.untoggle_optimizer(opt_g)

        # the discriminator: real images real, generated ones fake
        self.toggle_optimizer(opt_d)
        real_loss = self.adversarial_loss(self.discriminator(imgs), valid)
        fake = torch.zeros(imgs.size(0), 1).type_as(imgs)
        fake_loss = self.adversarial_loss(self.discriminator(self(z).detach()), fake)
        d_loss = (real_loss + fake_loss) / 2
        opt_d.zero_grad()
        self.manual_backward(d_loss)
        opt_d.step()
        self.untoggle_optimizer(opt_d)

        self.log_dict({"d_loss": d_loss, "g_loss": g_loss})

    def configure_optimizers(self):
        lr, b1, b2 = self.hparams.lr, self.hparams.b1, self.hparams.b2
        opt_g = torch.optim.Adam(self.generator.parameters(), lr=lr, betas=(b1, b2))
        opt_d = torch.optim.Adam(self.discriminator.parameters(), lr=lr, betas=(b1, b2))
        return opt_g, opt_d

    def on_train_epoch_end(self):
        z = self.validation_z.type_as(self.generator.model[0].weight)
        grid = make_grid(self(z))
        for logger in self.loggers:
            logger.experiment.add_image("generated_images", grid, self.current_epoch)


def main(args: Namespace) -> None:
    model = GAN(lr=args.lr, b1=args.b1, b2=args.b2, latent_dim=args.latent_dim)
    dm = MNISTDataModule()
    trainer = Trainer(accelerator="cpu", devices=args.devices, strategy=args.strategy, max_epochs=1)
    trainer.fit(model, dm)
    if trainer.is_global_zero:
        report(
            world_size=trainer.world_size,
            global_step=trainer.global_step,
            metrics={k: float(v) for k, v in trainer.callback_metrics.items()},
            weights=weights_digest(model),
        )


if __name__ == "__main__":
    cli_lightning_logo()
    parser = ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.0002, help="adam: learning rate")
    parser.add_argument("--b1", type=float, default=0.5, help="adam: decay of first order momentum of gradient")
    parser.add_argument("--b2", type=float, default=0.999, help="adam: decay of second order momentum of gradient")
    parser.add_argument("--latent_dim", type=int, default=32, help="dimensionality of the latent space")
    parser.add_argument("--devices", type=int, default=1, help="added for the test: how many CPU processes")
    parser.add_argument("--strategy", default="auto", help="added for the test: the Trainer's strategy")
    main(parser.parse_args())
