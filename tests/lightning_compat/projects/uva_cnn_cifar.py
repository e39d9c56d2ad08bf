"""UvA Deep Learning course, tutorial 5 (Inception, ResNet and DenseNet): the ResNet trained on CIFAR10.

Source:    phlippe/uvadlc_notebooks at commit 0da8037c7abc32f478ff6142acceb72dbcf088ee
           (https://github.com/phlippe/uvadlc_notebooks),
           docs/tutorial_notebooks/tutorial5/Inception_ResNet_DenseNet.ipynb, the code cells for the data,
           CIFARModule, create_model, train_model, ResNetBlock and ResNet
Licence:   MIT (Copyright (c) 2020 Phillip Lippe)
Written:   for this test after reading the notebook, not copied. Every call into Lightning is as the
           notebook makes it: ``import pytorch_lightning as pl``, pl.seed_everything, save_hyperparameters,
           example_input_array, configure_optimizers returning ([optimizer], [MultiStepLR]), self.log with
           on_step/on_epoch, Trainer(default_root_dir, accelerator, devices, max_epochs,
           callbacks=[ModelCheckpoint(save_weights_only=True, mode="max", monitor="val_acc"),
           LearningRateMonitor("epoch")], enable_progress_bar=True), trainer.logger._log_graph = True,
           trainer.logger._default_hp_metric = None, CIFARModule.load_from_checkpoint(
           trainer.checkpoint_callback.best_model_path), trainer.test(model, loader, verbose=False)[0]["test_acc"].
Changes:   - CIFAR10 download and torchvision transforms -> the synthetic stand-ins in _synthetic.py; the
             training augmentation (random flip and resized crop) is left out with torchvision.
           - the pretrained-checkpoint download cell left out (train_model then trains, as without a download).
           - sizes: 192/64 train/val split of 256 images, 128 test images, batch 128 -> 32, one block per
             stage with 8/16/32 channels, max_epochs 180 -> 2, num_workers 4 -> 0; only the ResNet of the
             notebook's four networks.
           - added: the last line writes results.json for the runner.
Exercises: the default TensorBoard logger and its private switches, graph logging from example_input_array,
           LearningRateMonitor, a monitored ModelCheckpoint with save_weights_only, load_from_checkpoint
           (hyper-parameters restored from the checkpoint), test() twice with the result key "test_acc".
"""

import os
from types import SimpleNamespace

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.optim as optim
import torch.utils.data as data
from _synthetic import CIFAR10, Compose, Normalize, ToTensor, report, weights_digest
from pytorch_lightning.callbacks import LearningRateMonitor, ModelCheckpoint

DATASET_PATH = "data"
CHECKPOINT_PATH = "saved_models/tutorial5"

device = torch.device("cpu")

train_dataset = CIFAR10(root=DATASET_PATH, train=True, download=True)
DATA_MEANS = (train_dataset.data / 255.0).mean(dim=(0, 1, 2)).tolist()
DATA_STD = (train_dataset.data / 255.0).std(dim=(0, 1, 2)).tolist()

test_transform = Compose([ToTensor(), Normalize(DATA_MEANS, DATA_STD)])
train_transform = Compose([ToTensor(), Normalize(DATA_MEANS, DATA_STD)])
train_dataset = CIFAR10(root=DATASET_PATH, train=True, transform=train_transform, download=True)
val_dataset = CIFAR10(root=DATASET_PATH, train=True, transform=test_transform, download=True)
pl.seed_everything(42)
train_set, _ = torch.utils.data.random_split(train_dataset, [192, 64])
pl.seed_everything(42)
_, val_set = torch.utils.data.random_split(val_dataset, [192, 64])
test_set = CIFAR10(root=DATASET_PATH, train=False, transform=test_transform, download=True)

train_loader = data.DataLoader(train_set, batch_size=32, shuffle=True, drop_last=True, pin_memory=True, num_workers=0)
val_loader = data.DataLoader(val_set, batch_size=32, shuffle=False, drop_last=False, num_workers=0)
test_loader = data.DataLoader(test_set, batch_size=32, shuffle=False, drop_last=False, num_workers=0)

pl.seed_everything(42)


class CIFARModule(pl.LightningModule):
    def __init__(self, model_name, model_hparams, optimizer_name, optimizer_hparams):
        super().__init__()
        self.save_hyperparameters()
        self.model = create_model(model_name, model_hparams)
        self.loss_module = nn.CrossEntropyLoss()
        # for the graph TensorBoard draws
        self.example_input_array = torch.zeros((1, 3, 32, 32), dtype=torch.float32)

    def forward(self, imgs):
        return self.model(imgs)

    def configure_optimizers(self):
        if self.hparams.optimizer_name == "Adam":
            optimizer = optim.AdamW(self.parameters(), **self.hparams.optimizer_hparams)
        elif self.hparams.optimizer_name == "SGD":
            optimizer = optim.SGD(self.parameters(), **self.hparams.optimizer_hparams)
        else:
            raise AssertionError(f'Unknown optimizer: "{self.hparams.optimizer_name}"')
        scheduler = optim.lr_scheduler.MultiStepLR(optimizer, milestones=[100, 150], gamma=0.1)
        return [optimizer], [scheduler]

    def training_step(self, batch, batch_idx):
        imgs, labels = batch
        preds = self.model(imgs)
        loss = self.loss_module(preds, labels)
        acc = (preds.argmax(dim=-1) == labels).float().mean()
        self.log("train_acc", acc, on_step=False, on_epoch=True)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        imgs, labels = batch
        preds = self.model(imgs).argmax(dim=-1)
        self.log("val_acc", (labels == preds).float().mean())

    def test_step(self, batch, batch_idx):
        imgs, labels = batch
        preds = self.model(imgs).argmax(dim=-1)
        self.log("test_acc", (labels == preds).float().mean())


model_dict = {}


def create_model(model_name, model_hparams):
    if model_name in model_dict:
        return model_dict[model_name](**model_hparams)
    raise AssertionError(f'Unknown model name "{model_name}". Available models are: {model_dict.keys()!s}')


act_fn_by_name = {"tanh": nn.Tanh, "relu": nn.ReLU, "leakyrelu": nn.LeakyReLU, "gelu": nn.GELU}


def train_model(model_name, save_name=None, **kwargs):
    if save_name is None:
        save_name = model_name
    trainer = pl.Trainer(
        default_root_dir=os.path.join(CHECKPOINT_PATH, save_name),
        accelerator="gpu" if str(device).startswith("cuda") else "cpu",
        devices=1,
        max_epochs=2,
        callbacks=[
            ModelCheckpoint(save_weights_only=True, mode="max", monitor="val_acc"),
            LearningRateMonitor("epoch"),
        ],
        enable_progress_bar=True,
    )
    trainer.logger._log_graph = True
    trainer.logger._default_hp_metric = None

    pretrained_filename = os.path.join(CHECKPOINT_PATH, save_name + ".ckpt")
    if os.path.isfile(pretrained_filename):
        print(f"Found pretrained model at {pretrained_filename}, loading...")
        model = CIFARModule.load_from_checkpoint(pretrained_filename)
    else:
        pl.seed_everything(42)
        model = CIFARModule(model_name=model_name, **kwargs)
        trainer.fit(model, train_loader, val_loader)
        model = CIFARModule.load_from_checkpoint(trainer.checkpoint_callback.best_model_path)

    val_result = trainer.test(model, val_loader, verbose=False)
    test_result = trainer.test(model, test_loader, verbose=False)
    result = {"test": test_result[0]["test_acc"], "val": val_result[0]["test_acc"]}
    return model, result


class ResNetBlock(nn.Module):
    def __init__(self, c_in, act_fn, subsample=False, c_out=-1):
        super().__init__()
        if not subsample:
            c_out = c_in
        stride = 2 if subsample else 1
        self.net = nn.Sequential(
            nn.Conv2d(c_in, c_out, kernel_size=3, padding=1, stride=stride, bias=False),
            nn.BatchNorm2d(c_out),
            act_fn(),
            nn.Conv2d(c_out, c_out, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(c_out),
        )
        self.downsample = nn.Conv2d(c_in, c_out, kernel_size=1, stride=2) if subsample else None
        self.act_fn = act_fn()

    def forward(self, x):
        z = self.net(x)
        if self.downsample is not None:
            x = self.downsample(x)
        return self.act_fn(z + x)


resnet_blocks_by_name = {"ResNetBlock": ResNetBlock}


class ResNet(nn.Module):
    def __init__(
        self, num_classes=10, num_blocks=(3, 3, 3), c_hidden=(16, 32, 64), act_fn_name="relu", block_name="ResNetBlock"
    ):
        super().__init__()
        assert block_name in resnet_blocks_by_name
        self.hparams = SimpleNamespace(
            num_classes=num_classes,
            c_hidden=c_hidden,
            num_blocks=num_blocks,
            act_fn_name=act_fn_name,
            act_fn=act_fn_by_name[act_fn_name],
            block_class=resnet_blocks_by_name[block_name],
        )
        c_hidden = self.hparams.c_hidden
        self.input_net = nn.Sequential(
            nn.Conv2d(3, c_hidden[0], kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(c_hidden[0]),
            self.hparams.act_fn(),
        )
        blocks = []
        for group, count in enumerate(self.hparams.num_blocks):
            for index in range(count):
                subsample = index == 0 and group > 0  # each group but the first starts by halving the image
                blocks.append(
                    self.hparams.block_class(
                        c_in=c_hidden[group - 1 if subsample else group],
                        act_fn=self.hparams.act_fn,
                        subsample=subsample,
                        c_out=c_hidden[group],
                    )
                )
        self.blocks = nn.Sequential(*blocks)
        self.output_net = nn.Sequential(
            nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(c_hidden[-1], self.hparams.num_classes)
        )
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity=self.hparams.act_fn_name)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        return self.output_net(self.blocks(self.input_net(x)))


model_dict["ResNet"] = ResNet

if __name__ == "__main__":
    resnet_model, resnet_results = train_model(
        model_name="ResNet",
        model_hparams={"num_classes": 10, "c_hidden": [8, 16, 32], "num_blocks": [1, 1, 1], "act_fn_name": "relu"},
        optimizer_name="SGD",
        optimizer_hparams={"lr": 0.1, "momentum": 0.9, "weight_decay": 1e-4},
    )
    report(results=resnet_results, weights=weights_digest(resnet_model))
