"""Lightning's own example: transfer learning with a BaseFinetuning callback, driven by a LightningCLI subclass.

Source:    Lightning-AI/pytorch-lightning at commit 7f0c3436cd3f6ad3753125672024fc415cbcb414
           (https://github.com/Lightning-AI/pytorch-lightning),
           examples/pytorch/domain_templates/computer_vision_fine_tuning.py
Licence:   Apache-2.0 (Copyright The Lightning AI team)
Written:   for this test after reading the source, not copied. Every call into Lightning is as the
           example makes it: the imports, MilestonesFinetuning(BaseFinetuning) with freeze_before_training /
           finetune_function / self.freeze / self.unfreeze_and_add_param_group, a LightningDataModule with
           prepare_data and properties, save_hyperparameters after building the model, torchmetrics objects
           called inside self.log, rank_zero_info, configure_optimizers returning ([Adam], [MultiStepLR]),
           MyLightningCLI.add_arguments_to_parser with add_lightning_class_args, link_arguments and
           set_defaults, MyLightningCLI(TransferLearningModel, CatDogImageDataModule,
           seed_everything_default=1234) running the ``fit`` subcommand.
Changes:   - the cats-and-dogs download (prepare_data) left out; torchvision's ImageFolder and transforms ->
             the stand-ins in _synthetic.py (two classes of 3x32x32 images; Resize((224, 224)) and
             RandomHorizontalFlip left out); get_torchvision_model("resnet50", weights="DEFAULT") -> the
             small random network of _synthetic.py whose pooled features are 2048 wide like a ResNet50's.
           - the runner passes ``fit --trainer.max_epochs=3 --finetuning.milestones=[1,2]
             --data.batch_size=16`` (the defaults are 15 epochs, milestones (5, 10), batch 8).
           - added: ``after_fit`` writes results.json for the runner.
Exercises: BaseFinetuning (freezing, param groups added to a running optimizer at milestones), a
           LightningCLI subclass with linked arguments and subcommands, MultiStepLR.
"""

import logging
from pathlib import Path

import torch
import torch.nn.functional as F
from _synthetic import Compose, ImageFolder, Normalize, get_torchvision_model, report, weights_digest
from lightning.pytorch import LightningDataModule, LightningModule, cli_lightning_logo
from lightning.pytorch.callbacks.finetuning import BaseFinetuning
from lightning.pytorch.cli import LightningCLI
from lightning.pytorch.utilities import rank_zero_info
from torch import nn, optim
from torch.optim.lr_scheduler import MultiStepLR
from torch.optim.optimizer import Optimizer
from torch.utils.data import DataLoader
from torchmetrics import Accuracy

log = logging.getLogger(__name__)


class MilestonesFinetuning(BaseFinetuning):
    def __init__(self, milestones: tuple = (5, 10), train_bn: bool = False):
        super().__init__()
        self.milestones = milestones
        self.train_bn = train_bn

    def freeze_before_training(self, pl_module: LightningModule):
        self.freeze(modules=pl_module.feature_extractor, train_bn=self.train_bn)

    def finetune_function(self, pl_module: LightningModule, epoch: int, optimizer: Optimizer):
        if epoch == self.milestones[0]:
            # the last five children first
            self.unfreeze_and_add_param_group(
                modules=pl_module.feature_extractor[-5:], optimizer=optimizer, train_bn=self.train_bn
            )
        elif epoch == self.milestones[1]:
            self.unfreeze_and_add_param_group(
                modules=pl_module.feature_extractor[:-5], optimizer=optimizer, train_bn=self.train_bn
            )


class CatDogImageDataModule(LightningDataModule):
    def __init__(self, dl_path: str | Path = "data", num_workers: int = 0, batch_size: int = 8):
        super().__init__()
        self._dl_path = dl_path
        self._num_workers = num_workers
        self._batch_size = batch_size

    def prepare_data(self):
        """The download of the images is left out for the test."""

    @property
    def data_path(self):
        return Path(self._dl_path).joinpath("cats_and_dogs_filtered")

    @property
    def normalize_transform(self):
        return Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])

    @property
    def train_transform(self):
        return Compose([self.normalize_transform])

    @property
    def valid_transform(self):
        return Compose([self.normalize_transform])

    def create_dataset(self, root, transform):
        return ImageFolder(root=root, transform=transform)

    def __dataloader(self, train: bool):
        if train:
            dataset = self.create_dataset(self.data_path.joinpath("train"), self.train_transform)
        else:
            dataset = self.create_dataset(self.data_path.joinpath("validation"), self.valid_transform)
        return DataLoader(dataset=dataset, batch_size=self._batch_size, num_workers=self._num_workers, shuffle=train)

    def train_dataloader(self):
        log.info("Training data loaded.")
        return self.__dataloader(train=True)

    def val_dataloader(self):
        log.info("Validation data loaded.")
        return self.__dataloader(train=False)


class TransferLearningModel(LightningModule):
    def __init__(
        self,
        backbone: str = "resnet50",
        train_bn: bool = False,
        milestones: tuple = (2, 4),
        batch_size: int = 32,
        lr: float = 1e-3,
        lr_scheduler_gamma: float = 1e-1,
        num_workers: int = 6,
        **kwargs,
    ) -> None:
        super().__init__()
        self.backbone = backbone
        self.train_bn = train_bn
        self.milestones = milestones
        self.batch_size = batch_size
        self.lr = lr
        self.lr_scheduler_gamma = lr_scheduler_gamma
        self.num_workers = num_workers
        self.__build_model()
        self.train_acc = Accuracy(task="binary")
        self.valid_acc = Accuracy(task="binary")
        self.save_hyperparameters()

    def __build_model(self):
        backbone = get_torchvision_model(self.backbone, weights="DEFAULT")
        self.feature_extractor = nn.Sequential(*list(backbone.children())[:-1])  # all but the classifier
        self.fc = nn.Sequential(nn.Linear(2048, 256), nn.ReLU(), nn.Linear(256, 32), nn.Linear(32, 1))
        self.loss_func = F.binary_cross_entropy_with_logits

    def forward(self, x):
        x = self.feature_extractor(x)
        return self.fc(x.squeeze(-1).squeeze(-1))

    def loss(self, logits, labels):
        return self.loss_func(input=logits, target=labels)

    def training_step(self, batch, batch_idx):
        x, y = batch
        y_logits = self.forward(x)
        y_scores = torch.sigmoid(y_logits)
        y_true = y.view((-1, 1)).type_as(x)
        train_loss = self.loss(y_logits, y_true)
        self.log("train_acc", self.train_acc(y_scores, y_true.int()), prog_bar=True)
        return train_loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        y_logits = self.forward(x)
        y_scores = torch.sigmoid(y_logits)
        y_true = y.view((-1, 1)).type_as(x)
        self.log("val_loss", self.loss(y_logits, y_true), prog_bar=True)
        self.log("val_acc", self.valid_acc(y_scores, y_true.int()), prog_bar=True)

    def configure_optimizers(self):
        parameters = list(self.parameters())
        trainable_parameters = list(filter(lambda p: p.requires_grad, parameters))
        rank_zero_info(
            f"The model will start training with only {len(trainable_parameters)} "
            f"trainable parameters out of {len(parameters)}."
        )
        optimizer = optim.Adam(trainable_parameters, lr=self.lr)
        scheduler = MultiStepLR(optimizer, milestones=self.milestones, gamma=self.lr_scheduler_gamma)
        return [optimizer], [scheduler]


class MyLightningCLI(LightningCLI):
    def add_arguments_to_parser(self, parser):
        parser.add_lightning_class_args(MilestonesFinetuning, "finetuning")
        parser.link_arguments("data.batch_size", "model.batch_size")
        parser.link_arguments("finetuning.milestones", "model.milestones")
        parser.link_arguments("finetuning.train_bn", "model.train_bn")
        parser.set_defaults(
            {
                "trainer.max_epochs": 15,
                "trainer.enable_model_summary": False,
                "trainer.num_sanity_val_steps": 0,
            }
        )

    def after_fit(self):  # added for the test runner
        optimizer = self.trainer.optimizers[0]
        report(
            param_groups=[len(group["params"]) for group in optimizer.param_groups],
            lrs=[group["lr"] for group in optimizer.param_groups],
            trainable=sum(p.requires_grad for p in self.model.parameters()),
            metrics={k: float(v) for k, v in self.trainer.callback_metrics.items()},
            weights=weights_digest(self.model),
        )


def cli_main():
    MyLightningCLI(TransferLearningModel, CatDogImageDataModule, seed_everything_default=1234)


if __name__ == "__main__":
    cli_lightning_logo()
    cli_main()
