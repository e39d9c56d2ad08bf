"""Lightning's own example: the ImageNet classifier (after pytorch/examples' imagenet/main.py) under LightningCLI.

Source:    Lightning-AI/pytorch-lightning at commit 215acdc3efa4b096c80ab2d0263cab20d2f06f54
           (https://github.com/Lightning-AI/pytorch-lightning), examples/pytorch/domain_templates/imagenet.py
Licence:   Apache-2.0 (Copyright The Lightning AI team)
Written:   for this test after reading the source, not copied. Every call into Lightning is as the
           example makes it: ``from lightning.pytorch import LightningModule``, ModelCheckpoint and
           TQDMProgressBar from lightning.pytorch.callbacks, LightningCLI, ParallelStrategy from
           lightning.pytorch.strategies, torchmetrics Accuracy objects (top-1 and top-5) passed to self.log
           with prog_bar=True, a shared eval_step for validation and test, configure_optimizers returning
           ([SGD], [LambdaLR]), setup(stage) reading self.trainer.strategy (and num_processes under a
           ParallelStrategy), and LightningCLI(ImageNetLightningModel, trainer_defaults={"max_epochs": 90,
           "accelerator": "auto", "devices": 1, "logger": False, "benchmark": True, "callbacks":
           [TQDMProgressBar(refresh_rate=10), ModelCheckpoint(monitor="val_acc1", mode="max")]},
           seed_everything_default=42, save_config_kwargs={"overwrite": True}).
Changes:   - lightning.pytorch.utilities.model_helpers.get_torchvision_model and torchvision's ImageFolder
             need torchvision and ImageNet: the stand-ins of _synthetic.py (a small ResNet-shaped network
             with 1000 outputs; two classes of 3x32x32 images under "train" and "val").
           - torchvision's transforms: RandomResizedCrop(224), Resize(256) and CenterCrop(224) left out (the
             images are 32x32 already), RandomHorizontalFlip and Normalize from _synthetic.py; ImageFolder's
             stand-in gives tensors, so ToTensor is left out too.
           - ``LightningCLI(...)`` is kept as ``cli`` and the last line writes results.json; the runner passes
             ``fit --model.data_path=. --model.batch_size=16 --model.workers=0 --trainer.max_epochs=2``.
Exercises: LightningCLI's fit subcommand with trainer_defaults callbacks, logger=False (checkpoints and
           config.yaml in the root folder), torchmetrics objects logged in training and evaluation,
           ModelCheckpoint(monitor=..., mode="max") on a metric object's value, a per-epoch LambdaLR.
"""

import os

import torch
import torch.nn.functional as F
import torch.optim as optim
import torch.optim.lr_scheduler as lr_scheduler
import torch.utils.data
from _synthetic import (
    Compose,
    ImageFolder,
    Normalize,
    RandomHorizontalFlip,
    get_torchvision_model,
    report,
    weights_digest,
)
from lightning.pytorch import LightningModule
from lightning.pytorch.callbacks import ModelCheckpoint, TQDMProgressBar
from lightning.pytorch.cli import LightningCLI
from lightning.pytorch.strategies import ParallelStrategy
from torch.utils.data import Dataset
from torchmetrics import Accuracy


class ImageNetLightningModel(LightningModule):
    def __init__(
        self,
        data_path: str,
        arch: str = "resnet18",
        weights: str | None = None,
        lr: float = 0.1,
        momentum: float = 0.9,
        weight_decay: float = 1e-4,
        batch_size: int = 256,
        workers: int = 4,
    ):
        super().__init__()
        self.arch = arch
        self.weights = weights
        self.lr = lr
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.data_path = data_path
        self.batch_size = batch_size
        self.workers = workers
        self.model = get_torchvision_model(self.arch, weights=self.weights)
        self.train_dataset: Dataset | None = None
        self.eval_dataset: Dataset | None = None
        self.train_acc1 = Accuracy(task="multiclass", num_classes=1000, top_k=1)
        self.train_acc5 = Accuracy(task="multiclass", num_classes=1000, top_k=5)
        self.eval_acc1 = Accuracy(task="multiclass", num_classes=1000, top_k=1)
        self.eval_acc5 = Accuracy(task="multiclass", num_classes=1000, top_k=5)

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_idx):
        images, target = batch
        output = self.model(images)
        loss_train = F.cross_entropy(output, target)
        self.log("train_loss", loss_train)
        self.train_acc1(output, target)
        self.train_acc5(output, target)
        self.log("train_acc1", self.train_acc1, prog_bar=True)
        self.log("train_acc5", self.train_acc5, prog_bar=True)
        return loss_train

    def eval_step(self, batch, batch_idx, prefix: str):
        images, target = batch
        output = self.model(images)
        loss_val = F.cross_entropy(output, target)
        self.log(f"{prefix}_loss", loss_val)
        self.eval_acc1(output, target)
        self.eval_acc5(output, target)
        self.log(f"{prefix}_acc1", self.eval_acc1, prog_bar=True)
        self.log(f"{prefix}_acc5", self.eval_acc5, prog_bar=True)
        return loss_val

    def validation_step(self, batch, batch_idx):
        return self.eval_step(batch, batch_idx, "val")

    def test_step(self, batch, batch_idx):
        return self.eval_step(batch, batch_idx, "test")

    def configure_optimizers(self):
        optimizer = optim.SGD(self.parameters(), lr=self.lr, momentum=self.momentum, weight_decay=self.weight_decay)
        scheduler = lr_scheduler.LambdaLR(optimizer, lambda epoch: 0.1 ** (epoch // 30))
        return [optimizer], [scheduler]

    def setup(self, stage: str):
        if isinstance(self.trainer.strategy, ParallelStrategy):
            # one process per device: each loads its share of the batch
            num_processes = max(1, self.trainer.strategy.num_processes)
            self.batch_size = int(self.batch_size / num_processes)
            self.workers = int(self.workers / num_processes)

        normalize = Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
        if stage == "fit":
            train_dir = os.path.join(self.data_path, "train")
            self.train_dataset = ImageFolder(train_dir, Compose([RandomHorizontalFlip(), normalize]))
        val_dir = os.path.join(self.data_path, "val")
        self.eval_dataset = ImageFolder(val_dir, Compose([normalize]))

    def train_dataloader(self):
        return torch.utils.data.DataLoader(
            dataset=self.train_dataset,
            batch_size=self.batch_size,
            shuffle=True,
            num_workers=self.workers,
            pin_memory=True,
        )

    def val_dataloader(self):
        return torch.utils.data.DataLoader(
            self.eval_dataset, batch_size=self.batch_size, num_workers=self.workers, pin_memory=True
        )

    def test_dataloader(self):
        return self.val_dataloader()


if __name__ == "__main__":
    cli = LightningCLI(
        ImageNetLightningModel,
        trainer_defaults={
            "max_epochs": 90,
            "accelerator": "auto",
            "devices": 1,
            "logger": False,
            "benchmark": True,
            "callbacks": [
                TQDMProgressBar(refresh_rate=10),
                ModelCheckpoint(monitor="val_acc1", mode="max"),
            ],
        },
        seed_everything_default=42,
        save_config_kwargs={"overwrite": True},
    )
    checkpoint = cli.trainer.checkpoint_callback
    report(
        metrics={k: float(v) for k, v in cli.trainer.callback_metrics.items()},
        progress_bar=sorted(cli.trainer.progress_bar_metrics),
        best_path=os.path.relpath(checkpoint.best_model_path),
        best_score=float(checkpoint.best_model_score),
        global_step=cli.trainer.global_step,
        lr=[group["lr"] for group in cli.trainer.optimizers[0].param_groups],
        weights=weights_digest(cli.model),
        batch_size=cli.model.batch_size,
    )
