"""UvA Deep Learning course, tutorial 9 (Deep autoencoders): the CIFAR10 convolutional autoencoder.

Source:    phlippe/uvadlc_notebooks at commit 0da8037c7abc32f478ff6142acceb72dbcf088ee
           (https://github.com/phlippe/uvadlc_notebooks), docs/tutorial_notebooks/tutorial9/AE_CIFAR10.ipynb:
           the data cell, Encoder, Decoder, Autoencoder, GenerateCallback and train_cifar
Licence:   MIT (Copyright (c) 2020 Phillip Lippe)
Written:   for this test after reading the notebook, not copied. Every call into Lightning is as the
           notebook makes it: ``import pytorch_lightning as pl``, save_hyperparameters with classes as
           arguments, example_input_array, configure_optimizers returning {"optimizer", "lr_scheduler":
           ReduceLROnPlateau, "monitor": "val_loss"}, a pl.Callback whose on_train_epoch_end calls
           trainer.logger.experiment.add_image(..., global_step=trainer.global_step), Trainer(default_root_dir,
           accelerator, devices, max_epochs, callbacks=[ModelCheckpoint(save_weights_only=True),
           GenerateCallback(...), LearningRateMonitor("epoch")]), trainer.logger._log_graph = True,
           trainer.logger._default_hp_metric = None, trainer.test(model, loader, verbose=False).
Changes:   - CIFAR10 download and torchvision transforms -> the synthetic stand-ins in _synthetic.py;
             torchvision.utils.make_grid -> the stand-in with the same arguments.
           - the pretrained-checkpoint download cell and the plotting cells left out.
           - sizes: 192/64 train/val split of 256 images, 128 test images, batch 256 -> 32, num_workers 4 -> 0,
             base_channel_size 32 -> 8, max_epochs 500 -> 2, latent dimensions [64, 128, 256, 384] -> [64].
           - added: the last line writes results.json for the runner.
Exercises: the default logger being TensorBoard (its SummaryWriter through logger.experiment), graph
           logging, a scheduler dict monitoring val_loss, LearningRateMonitor, ModelCheckpoint without a
           monitor, a callback writing images every N epochs.
"""

import os

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch.utils.data as data
from _synthetic import CIFAR10, Compose, Normalize, ToTensor, make_grid, report, weights_digest
from pytorch_lightning.callbacks import LearningRateMonitor, ModelCheckpoint

DATASET_PATH = "data"
CHECKPOINT_PATH = "saved_models/tutorial9"
pl.seed_everything(42)
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
device = torch.device("cpu")

transform = Compose([ToTensor(), Normalize((0.5,), (0.5,))])
train_dataset = CIFAR10(root=DATASET_PATH, train=True, transform=transform, download=True)
pl.seed_everything(42)
train_set, val_set = torch.utils.data.random_split(train_dataset, [192, 64])
test_set = CIFAR10(root=DATASET_PATH, train=False, transform=transform, download=True)

train_loader = data.DataLoader(train_set, batch_size=32, shuffle=True, drop_last=True, pin_memory=True, num_workers=0)
val_loader = data.DataLoader(val_set, batch_size=32, shuffle=False, drop_last=False, num_workers=0)
test_loader = data.DataLoader(test_set, batch_size=32, shuffle=False, drop_last=False, num_workers=0)


def get_train_images(num):
    return torch.stack([train_dataset[i][0] for i in range(num)], dim=0)


class Encoder(nn.Module):
    def __init__(self, num_input_channels: int, base_channel_size: int, latent_dim: int, act_fn: object = nn.GELU):
        super().__init__()
        c_hid = base_channel_size
        self.net = nn.Sequential(
            nn.Conv2d(num_input_channels, c_hid, kernel_size=3, padding=1, stride=2),  # 32x32 -> 16x16
            act_fn(),
            nn.Conv2d(c_hid, c_hid, kernel_size=3, padding=1),
            act_fn(),
            nn.Conv2d(c_hid, 2 * c_hid, kernel_size=3, padding=1, stride=2),  # -> 8x8
            act_fn(),
            nn.Conv2d(2 * c_hid, 2 * c_hid, kernel_size=3, padding=1),
            act_fn(),
            nn.Conv2d(2 * c_hid, 2 * c_hid, kernel_size=3, padding=1, stride=2),  # -> 4x4
            act_fn(),
            nn.Flatten(),
            nn.Linear(2 * 16 * c_hid, latent_dim),
        )

    def forward(self, x):
        return self.net(x)


class Decoder(nn.Module):
    def __init__(self, num_input_channels: int, base_channel_size: int, latent_dim: int, act_fn: object = nn.GELU):
        super().__init__()
        c_hid = base_channel_size
        self.linear = nn.Sequential(nn.Linear(latent_dim, 2 * 16 * c_hid), act_fn())

        def up(c_in, c_out):  # doubles height and width
            return nn.ConvTranspose2d(c_in, c_out, kernel_size=3, output_padding=1, padding=1, stride=2)

        self.net = nn.Sequential(
            up(2 * c_hid, 2 * c_hid),  # 4x4 -> 8x8
            act_fn(),
            nn.Conv2d(2 * c_hid, 2 * c_hid, kernel_size=3, padding=1),
            act_fn(),
            up(2 * c_hid, c_hid),  # -> 16x16
            act_fn(),
            nn.Conv2d(c_hid, c_hid, kernel_size=3, padding=1),
            act_fn(),
            up(c_hid, num_input_channels),  # -> 32x32
            nn.Tanh(),  # the images are scaled to [-1, 1]
        )

    def forward(self, x):
        x = self.linear(x)
        return self.net(x.reshape(x.shape[0], -1, 4, 4))


class Autoencoder(pl.LightningModule):
    def __init__(
        self,
        base_channel_size: int,
        latent_dim: int,
        encoder_class: object = Encoder,
        decoder_class: object = Decoder,
        num_input_channels: int = 3,
        width: int = 32,
        height: int = 32,
    ):
        super().__init__()
        self.save_hyperparameters()
        self.encoder = encoder_class(num_input_channels, base_channel_size, latent_dim)
        self.decoder = decoder_class(num_input_channels, base_channel_size, latent_dim)
        self.example_input_array = torch.zeros(2, num_input_channels, width, height)

    def forward(self, x):
        return self.decoder(self.encoder(x))

    def _get_reconstruction_loss(self, batch):
        x, _ = batch
        x_hat = self.forward(x)
        loss = F.mse_loss(x, x_hat, reduction="none")
        return loss.sum(dim=[1, 2, 3]).mean(dim=[0])

    def configure_optimizers(self):
        optimizer = optim.Adam(self.parameters(), lr=1e-3)
        scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.2, patience=20, min_lr=5e-5)
        return {"optimizer": optimizer, "lr_scheduler": scheduler, "monitor": "val_loss"}

    def training_step(self, batch, batch_idx):
        loss = self._get_reconstruction_loss(batch)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self._get_reconstruction_loss(batch))

    def test_step(self, batch, batch_idx):
        self.log("test_loss", self._get_reconstruction_loss(batch))


class GenerateCallback(pl.Callback):
    def __init__(self, input_imgs, every_n_epochs=1):
        super().__init__()
        self.input_imgs = input_imgs
        self.every_n_epochs = every_n_epochs

    def on_train_epoch_end(self, trainer, pl_module):
        if trainer.current_epoch % self.every_n_epochs == 0:
            input_imgs = self.input_imgs.to(pl_module.device)
            with torch.no_grad():
                pl_module.eval()
                reconst_imgs = pl_module(input_imgs)
                pl_module.train()
            imgs = torch.stack([input_imgs, reconst_imgs], dim=1).flatten(0, 1)
            grid = make_grid(imgs, nrow=2, normalize=True, range=(-1, 1))
            trainer.logger.experiment.add_image("Reconstructions", grid, global_step=trainer.global_step)


def train_cifar(latent_dim):
    trainer = pl.Trainer(
        default_root_dir=os.path.join(CHECKPOINT_PATH, f"cifar10_{latent_dim}"),
        accelerator="gpu" if str(device).startswith("cuda") else "cpu",
        devices=1,
        max_epochs=2,
        callbacks=[
            ModelCheckpoint(save_weights_only=True),
            GenerateCallback(get_train_images(8), every_n_epochs=1),
            LearningRateMonitor("epoch"),
        ],
    )
    trainer.logger._log_graph = True
    trainer.logger._default_hp_metric = None

    pretrained_filename = os.path.join(CHECKPOINT_PATH, f"cifar10_{latent_dim}.ckpt")
    if os.path.isfile(pretrained_filename):
        print("Found pretrained model, loading...")
        model = Autoencoder.load_from_checkpoint(pretrained_filename)
    else:
        model = Autoencoder(base_channel_size=8, latent_dim=latent_dim)
        trainer.fit(model, train_loader, val_loader)
    val_result = trainer.test(model, val_loader, verbose=False)
    test_result = trainer.test(model, test_loader, verbose=False)
    result = {"test": test_result, "val": val_result}
    return model, result


if __name__ == "__main__":
    model_dict = {}
    for latent_dim in [64]:
        model_ld, result_ld = train_cifar(latent_dim)
        model_dict[latent_dim] = {"model": model_ld, "result": result_ld}
    report(
        val_loss=model_dict[64]["result"]["val"][0]["test_loss"],
        test_loss=model_dict[64]["result"]["test"][0]["test_loss"],
        weights=weights_digest(model_dict[64]["model"]),
    )
