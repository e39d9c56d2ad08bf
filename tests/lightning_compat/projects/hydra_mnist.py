"""lightning-hydra-template: the MNIST LitModule, DataModule, callbacks and loggers config, and train.py.

Source:    ashleve/lightning-hydra-template at commit bddbc24b82ab6ccfa6243e815a49dc5bfe8d4144
           (https://github.com/ashleve/lightning-hydra-template): src/models/mnist_module.py,
           src/data/mnist_datamodule.py, src/models/components/simple_dense_net.py, src/train.py,
           src/utils/logging_utils.py, configs/{train,model/mnist,data/mnist,trainer/default,trainer/ddp_sim,
           callbacks/default,callbacks/model_checkpoint,callbacks/early_stopping,callbacks/model_summary,
           callbacks/rich_progress_bar,logger/csv,logger/tensorboard}.yaml
Licence:   MIT (Copyright (c) 2021 ashleve), stated in the repository's README.md
Written:   for this test after reading the source, not copied. Every call into Lightning is as the source
           makes it (imports, hooks, self.log arguments, save_hyperparameters(logger=False), the optimizer
           and scheduler partials and the scheduler dict, torchmetrics objects, self.trainer.world_size,
           self.trainer.model, the callbacks and loggers with the arguments the YAML files give, and
           train.py's fit / checkpoint_callback.best_model_path / test(ckpt_path=...) / callback_metrics).
Changes:   - Hydra and OmegaConf are not used: ``CONFIG`` holds the YAML files' values and ``instantiate``
             builds the same objects; ``key=value`` and ``group=option`` arguments override it as Hydra's
             command line does (the runner passes the reduced sizes that way).
           - torchvision's MNIST and transforms -> the synthetic stand-ins in _synthetic.py (same shapes/dtypes).
           - RankedLogger, task_wrapper and extras (printing, tags) left out: they do not touch Lightning.
           - added: the last line of ``main`` writes results.json for the runner.
           - the runner sets TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1, torch's documented switch: the module's
             hyper-parameters hold the network and the optimizer/scheduler partials, which torch>=2.6's
             weights-only loading refuses, so without it ``trainer.test(ckpt_path=...)`` fails under
             Lightning 2.6.6 itself (UnpicklingError naming SimpleDenseNet).
Exercises: torchmetrics objects in self.log, MaxMetric best tracking with sync_dist, ReduceLROnPlateau
           monitoring "val/loss", ModelCheckpoint(filename="epoch_{epoch:03d}", auto_insert_metric_name=False,
           save_last=True, monitor="val/acc", mode="max"), EarlyStopping, RichModelSummary(max_depth=-1),
           RichProgressBar, CSVLogger(prefix=""), logger.log_hyperparams, test(ckpt_path=best_model_path).
           ``trainer=ddp_sim`` (two CPU processes under ``strategy="ddp_spawn"``) and ``logger=tensorboard`` work
           here too; the suite runs ``logger=csv`` only (ddp_sim took 112 s under Lightning on a 2-core machine).
"""

from __future__ import annotations

import ast
import copy
import functools
import itertools
import logging
import os
import sys
from typing import Any

import lightning as L
import torch
from _synthetic import MNIST, Compose, Normalize, ToTensor, report, weights_digest
from lightning import Callback, LightningDataModule, LightningModule, Trainer
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint, RichModelSummary, RichProgressBar
from lightning.pytorch.loggers import CSVLogger, Logger, TensorBoardLogger
from lightning_utilities.core.rank_zero import rank_zero_only
from torch import nn
from torch.utils.data import ConcatDataset, DataLoader, Dataset, random_split
from torchmetrics import MaxMetric, MeanMetric
from torchmetrics.classification.accuracy import Accuracy

log = logging.getLogger(__name__)


# ---- src/models/components/simple_dense_net.py ------------------------------------------------------
class SimpleDenseNet(nn.Module):
    def __init__(
        self,
        input_size: int = 784,
        lin1_size: int = 256,
        lin2_size: int = 256,
        lin3_size: int = 256,
        output_size: int = 10,
    ) -> None:
        super().__init__()
        widths = [input_size, lin1_size, lin2_size, lin3_size]
        layers: list[nn.Module] = []
        for width_in, width_out in itertools.pairwise(widths):
            layers += [nn.Linear(width_in, width_out), nn.BatchNorm1d(width_out), nn.ReLU()]
        self.model = nn.Sequential(*layers, nn.Linear(lin3_size, output_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x.view(x.size(0), -1))  # type: ignore[no-any-return]


# ---- src/models/mnist_module.py ----------------------------------------------------------------------
class MNISTLitModule(LightningModule):
    def __init__(
        self,
        net: torch.nn.Module,
        optimizer: Any,
        scheduler: Any,
        compile: bool,
    ) -> None:
        super().__init__()
        self.save_hyperparameters(logger=False)
        self.net = net
        self.criterion = torch.nn.CrossEntropyLoss()
        self.train_acc = Accuracy(task="multiclass", num_classes=10)
        self.val_acc = Accuracy(task="multiclass", num_classes=10)
        self.test_acc = Accuracy(task="multiclass", num_classes=10)
        self.train_loss = MeanMetric()
        self.val_loss = MeanMetric()
        self.test_loss = MeanMetric()
        self.val_acc_best = MaxMetric()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)  # type: ignore[no-any-return]

    def on_train_start(self) -> None:
        # the sanity check ran validation steps: their values must not count
        self.val_loss.reset()
        self.val_acc.reset()
        self.val_acc_best.reset()

    def model_step(self, batch: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        x, y = batch
        logits = self.forward(x)
        return self.criterion(logits, y), torch.argmax(logits, dim=1), y

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        loss, preds, targets = self.model_step(batch)
        self.train_loss(loss)
        self.train_acc(preds, targets)
        self.log("train/loss", self.train_loss, on_step=False, on_epoch=True, prog_bar=True)
        self.log("train/acc", self.train_acc, on_step=False, on_epoch=True, prog_bar=True)
        return loss

    def on_train_epoch_end(self) -> None:
        pass

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        loss, preds, targets = self.model_step(batch)
        self.val_loss(loss)
        self.val_acc(preds, targets)
        self.log("val/loss", self.val_loss, on_step=False, on_epoch=True, prog_bar=True)
        self.log("val/acc", self.val_acc, on_step=False, on_epoch=True, prog_bar=True)

    def on_validation_epoch_end(self) -> None:
        self.val_acc_best(self.val_acc.compute())
        # logged as a value, not as the metric object, so that Lightning does not reset it each epoch
        self.log("val/acc_best", self.val_acc_best.compute(), sync_dist=True, prog_bar=True)

    def test_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        loss, preds, targets = self.model_step(batch)
        self.test_loss(loss)
        self.test_acc(preds, targets)
        self.log("test/loss", self.test_loss, on_step=False, on_epoch=True, prog_bar=True)
        self.log("test/acc", self.test_acc, on_step=False, on_epoch=True, prog_bar=True)

    def on_test_epoch_end(self) -> None:
        pass

    def setup(self, stage: str) -> None:
        if self.hparams.compile and stage == "fit":
            self.net = torch.compile(self.net)

    def configure_optimizers(self) -> dict[str, Any]:
        optimizer = self.hparams.optimizer(params=self.trainer.model.parameters())
        if self.hparams.scheduler is not None:
            scheduler = self.hparams.scheduler(optimizer=optimizer)
            return {
                "optimizer": optimizer,
                "lr_scheduler": {"scheduler": scheduler, "monitor": "val/loss", "interval": "epoch", "frequency": 1},
            }
        return {"optimizer": optimizer}


# ---- src/data/mnist_datamodule.py --------------------------------------------------------------------
class MNISTDataModule(LightningDataModule):
    def __init__(
        self,
        data_dir: str = "data/",
        train_val_test_split: tuple[int, int, int] = (55_000, 5_000, 10_000),
        batch_size: int = 64,
        num_workers: int = 0,
        pin_memory: bool = False,
    ) -> None:
        super().__init__()
        self.save_hyperparameters(logger=False)
        self.transforms = Compose([ToTensor(), Normalize((0.1307,), (0.3081,))])
        self.data_train: Dataset[Any] | None = None
        self.data_val: Dataset[Any] | None = None
        self.data_test: Dataset[Any] | None = None
        self.batch_size_per_device = batch_size

    @property
    def num_classes(self) -> int:
        return 10

    def prepare_data(self) -> None:
        MNIST(self.hparams.data_dir, train=True, download=True)
        MNIST(self.hparams.data_dir, train=False, download=True)

    def setup(self, stage: str | None = None) -> None:
        if self.trainer is not None:
            if self.hparams.batch_size % self.trainer.world_size != 0:
                raise RuntimeError(
                    f"Batch size ({self.hparams.batch_size}) is not divisible by the number of devices "
                    f"({self.trainer.world_size})."
                )
            self.batch_size_per_device = self.hparams.batch_size // self.trainer.world_size
        if not self.data_train and not self.data_val and not self.data_test:
            trainset = MNIST(self.hparams.data_dir, train=True, transform=self.transforms)
            testset = MNIST(self.hparams.data_dir, train=False, transform=self.transforms)
            dataset = ConcatDataset(datasets=[trainset, testset])
            self.data_train, self.data_val, self.data_test = random_split(
                dataset=dataset,
                lengths=self.hparams.train_val_test_split,
                generator=torch.Generator().manual_seed(42),
            )

    def _loader(self, dataset: Dataset[Any] | None, shuffle: bool) -> DataLoader[Any]:
        return DataLoader(
            dataset=dataset,  # type: ignore[arg-type]
            batch_size=self.batch_size_per_device,
            num_workers=self.hparams.num_workers,
            pin_memory=self.hparams.pin_memory,
            shuffle=shuffle,
        )

    def train_dataloader(self) -> DataLoader[Any]:
        return self._loader(self.data_train, shuffle=True)

    def val_dataloader(self) -> DataLoader[Any]:
        return self._loader(self.data_val, shuffle=False)

    def test_dataloader(self) -> DataLoader[Any]:
        return self._loader(self.data_test, shuffle=False)

    def teardown(self, stage: str | None = None) -> None:
        pass

    def state_dict(self) -> dict[Any, Any]:
        return {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        pass


# ---- configs/*.yaml, as Hydra composes them for `python src/train.py` ----------------------------------
OUTPUT_DIR = os.path.join("logs", "train", "runs", "run")
CONFIG: dict[str, Any] = {
    "seed": None,
    "train": True,
    "test": True,
    "ckpt_path": None,
    "data": {
        "_target_": MNISTDataModule,
        "data_dir": "data/",
        "batch_size": 128,
        "train_val_test_split": [55_000, 5_000, 10_000],
        "num_workers": 0,
        "pin_memory": False,
    },
    "model": {
        "_target_": MNISTLitModule,
        "optimizer": {"_target_": torch.optim.Adam, "_partial_": True, "lr": 0.001, "weight_decay": 0.0},
        "scheduler": {
            "_target_": torch.optim.lr_scheduler.ReduceLROnPlateau,
            "_partial_": True,
            "mode": "min",
            "factor": 0.1,
            "patience": 10,
        },
        "net": {
            "_target_": SimpleDenseNet,
            "input_size": 784,
            "lin1_size": 64,
            "lin2_size": 128,
            "lin3_size": 64,
            "output_size": 10,
        },
        "compile": False,
    },
    "callbacks": {
        "model_checkpoint": {
            "_target_": ModelCheckpoint,
            "dirpath": os.path.join(OUTPUT_DIR, "checkpoints"),
            "filename": "epoch_{epoch:03d}",
            "monitor": "val/acc",
            "verbose": False,
            "save_last": True,
            "save_top_k": 1,
            "mode": "max",
            "auto_insert_metric_name": False,
            "save_weights_only": False,
            "every_n_train_steps": None,
            "train_time_interval": None,
            "every_n_epochs": None,
            "save_on_train_epoch_end": None,
        },
        "early_stopping": {
            "_target_": EarlyStopping,
            "monitor": "val/acc",
            "min_delta": 0.0,
            "patience": 100,
            "verbose": False,
            "mode": "max",
            "strict": True,
            "check_finite": True,
            "stopping_threshold": None,
            "divergence_threshold": None,
            "check_on_train_epoch_end": None,
        },
        "model_summary": {"_target_": RichModelSummary, "max_depth": -1},
        "rich_progress_bar": {"_target_": RichProgressBar},
    },
    "logger": None,
    "trainer": {
        "_target_": Trainer,
        "default_root_dir": OUTPUT_DIR,
        "min_epochs": 1,
        "max_epochs": 10,
        "accelerator": "cpu",
        "devices": 1,
        "check_val_every_n_epoch": 1,
        "deterministic": False,
    },
}
GROUP_OPTIONS: dict[str, dict[str, Any]] = {
    "trainer=ddp_sim": {"accelerator": "cpu", "devices": 2, "strategy": "ddp_spawn"},
    "logger=csv": {"csv": {"_target_": CSVLogger, "save_dir": OUTPUT_DIR, "name": "csv/", "prefix": ""}},
    "logger=tensorboard": {
        "tensorboard": {
            "_target_": TensorBoardLogger,
            "save_dir": os.path.join(OUTPUT_DIR, "tensorboard/"),
            "name": None,
            "log_graph": False,
            "default_hp_metric": True,
            "prefix": "",
        }
    },
}


def compose(overrides: list[str]) -> dict[str, Any]:
    """Hydra's command line: ``group=option`` picks a config file, ``a.b=value`` sets one value."""
    cfg = copy.deepcopy(CONFIG)
    for override in overrides:
        key, _, text = override.partition("=")
        if override in GROUP_OPTIONS:
            if key == "trainer":
                cfg["trainer"].update(GROUP_OPTIONS[override])
            else:
                cfg[key] = {**(cfg.get(key) or {}), **GROUP_OPTIONS[override]}
            continue
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text
        *parents, leaf = key.split(".")
        node = cfg
        for parent in parents:
            node = node[parent]
        node[leaf] = value
    return cfg


def instantiate(node: Any, **extra: Any) -> Any:
    """hydra.utils.instantiate for the plain dicts above (``_target_``, ``_partial_``, nesting)."""
    if isinstance(node, dict) and "_target_" in node:
        kwargs = {k: instantiate(v) for k, v in node.items() if k not in ("_target_", "_partial_")}
        kwargs.update(extra)
        if node.get("_partial_"):
            return functools.partial(node["_target_"], **kwargs)
        return node["_target_"](**kwargs)
    if isinstance(node, dict):
        return {k: instantiate(v) for k, v in node.items()}
    if isinstance(node, list):
        return [instantiate(v) for v in node]
    return node


# ---- src/utils/instantiators.py and src/utils/logging_utils.py ---------------------------------------
def instantiate_callbacks(callbacks_cfg: dict[str, Any] | None) -> list[Callback]:
    return [instantiate(cb) for cb in (callbacks_cfg or {}).values() if "_target_" in cb]


def instantiate_loggers(logger_cfg: dict[str, Any] | None) -> list[Logger]:
    return [instantiate(lg) for lg in (logger_cfg or {}).values() if "_target_" in lg]


@rank_zero_only
def log_hyperparameters(object_dict: dict[str, Any]) -> None:
    cfg, model, trainer = object_dict["cfg"], object_dict["model"], object_dict["trainer"]
    if not trainer.logger:
        log.warning("Logger not found! Skipping hyperparameter logging...")
        return

    def described(node: Any) -> Any:  # OmegaConf.to_container keeps the _target_ strings
        if isinstance(node, dict):
            return {k: described(v) for k, v in node.items()}
        return f"{node.__module__}.{node.__qualname__}" if isinstance(node, type) else node

    hparams: dict[str, Any] = {"model": described(cfg["model"])}
    hparams["model/params/total"] = sum(p.numel() for p in model.parameters())
    hparams["model/params/trainable"] = sum(p.numel() for p in model.parameters() if p.requires_grad)
    hparams["model/params/non_trainable"] = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    hparams["data"] = described(cfg["data"])
    hparams["trainer"] = described(cfg["trainer"])
    hparams["callbacks"] = described(cfg.get("callbacks"))
    hparams["ckpt_path"] = cfg.get("ckpt_path")
    hparams["seed"] = cfg.get("seed")
    for logger in trainer.loggers:
        logger.log_hyperparams(hparams)


# ---- src/train.py -------------------------------------------------------------------------------------
def train(cfg: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    if cfg.get("seed"):
        L.seed_everything(cfg["seed"], workers=True)

    datamodule: LightningDataModule = instantiate(cfg["data"])
    model: LightningModule = instantiate(cfg["model"])
    callbacks: list[Callback] = instantiate_callbacks(cfg.get("callbacks"))
    logger: list[Logger] = instantiate_loggers(cfg.get("logger"))
    trainer: Trainer = instantiate(cfg["trainer"], callbacks=callbacks, logger=logger)

    object_dict = {
        "cfg": cfg,
        "datamodule": datamodule,
        "model": model,
        "callbacks": callbacks,
        "logger": logger,
        "trainer": trainer,
    }
    if logger:
        log_hyperparameters(object_dict)

    if cfg.get("train"):
        trainer.fit(model=model, datamodule=datamodule, ckpt_path=cfg.get("ckpt_path"))
    train_metrics = trainer.callback_metrics

    if cfg.get("test"):
        ckpt_path = trainer.checkpoint_callback.best_model_path
        if ckpt_path == "":
            log.warning("Best ckpt not found! Using current weights for testing...")
            ckpt_path = None
        trainer.test(model=model, datamodule=datamodule, ckpt_path=ckpt_path)
    test_metrics = trainer.callback_metrics

    metric_dict = {**train_metrics, **test_metrics}
    return metric_dict, object_dict


def main(overrides: list[str]) -> None:
    metric_dict, objects = train(compose(overrides))
    trainer = objects["trainer"]
    report(
        metrics={k: float(v) for k, v in metric_dict.items()},
        best_model=os.path.relpath(trainer.checkpoint_callback.best_model_path),
        epochs=trainer.current_epoch,
        weights=weights_digest(objects["model"]),
    )


if __name__ == "__main__":
    main(sys.argv[1:])
