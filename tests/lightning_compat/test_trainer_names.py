"""The Trainer names issue 19 added (its options as attributes, the loaders and batch counts of the calls,
``estimated_stepping_batches``, ``is_last_batch``, ``ckpt_path``, ``print``, ``init_module``...): the same
script under Lightning 2.6.6 and accelplug, what it reads compared."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")

_OPTION_NAMES = [
    "max_epochs",
    "max_steps",
    "min_epochs",
    "min_steps",
    "accumulate_grad_batches",
    "gradient_clip_val",
    "gradient_clip_algorithm",
    "limit_train_batches",
    "limit_val_batches",
    "limit_test_batches",
    "limit_predict_batches",
    "log_every_n_steps",
    "num_sanity_val_steps",
    "val_check_interval",
    "check_val_every_n_epoch",
    "overfit_batches",
    "fast_dev_run",
    "reload_dataloaders_every_n_epochs",
    "barebones",
    "enable_autolog_hparams",
    "num_nodes",
    "device_ids",
    "ckpt_path",
    "received_sigterm",
    "scaler",
    "is_last_batch",
    "num_training_batches",
    "num_val_batches",
    "train_dataloader",
    "evaluating",
]


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    with quiet_lightning():  # Lightning's own warnings only: accelplug's stay visible
        yield


def _trainer(framework: Any, **options: Any) -> Any:
    quiet = {"logger": False, "enable_checkpointing": False, "enable_progress_bar": False}
    return framework.Trainer(accelerator="cpu", devices=1, enable_model_summary=False, **{**quiet, **options})


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"max_steps": 10},
        {"fast_dev_run": True},
        {"fast_dev_run": 3},
        {"num_sanity_val_steps": -1, "gradient_clip_algorithm": "VALUE", "gradient_clip_val": 0.5},
        {
            "limit_train_batches": 0.5,
            "accumulate_grad_batches": 2,
            "val_check_interval": 0.25,
            "min_epochs": 2,
            "min_steps": 3,
            "overfit_batches": 2,
        },
    ],
    ids=["defaults", "max_steps", "fast_dev_run", "fast_dev_run-3", "sanity-all-clip-value", "limits"],
)
def test_the_options_read_back_as_lightnings_trainer_attributes(options: dict[str, Any]) -> None:
    def read(framework: Any) -> dict[str, Any]:
        trainer = _trainer(framework, **options)
        return {name: getattr(trainer, name) for name in _OPTION_NAMES}

    assert read(accelplug) == read(lightning)


def _data(n: int, batch_size: int = 8, seed: int = 0) -> DataLoader[Any]:
    x = torch.randn(n, 2, generator=torch.Generator().manual_seed(seed))
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=batch_size)


def _module(framework: Any, seen: dict[str, Any]) -> Any:
    class Regression(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            seen.setdefault("is_last_batch", []).append(self.trainer.is_last_batch)
            x, y = batch
            return torch.nn.functional.mse_loss(self.layer(x), y)

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            pass

        def test_step(self, batch: Any, batch_idx: int) -> None:
            pass

        def predict_step(self, batch: Any, batch_idx: int) -> Any:
            return batch[0].shape[0]

        def train_dataloader(self) -> DataLoader[Any]:
            return _data(44)

        def val_dataloader(self) -> DataLoader[Any]:
            return _data(24, seed=1)

        def configure_optimizers(self) -> Any:
            seen["stepping batches in configure_optimizers"] = self.trainer.estimated_stepping_batches
            seen["num_training_batches in configure_optimizers"] = self.trainer.num_training_batches
            optimizer = torch.optim.SGD(self.parameters(), lr=0.01)
            total = int(self.trainer.estimated_stepping_batches)
            return [optimizer], [torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=total)]

    torch.manual_seed(0)
    return Regression()


def _calls(framework: Any, root: Path, options: dict[str, Any]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    trainer = _trainer(framework, default_root_dir=root, **options)
    seen["before fit"] = [trainer.train_dataloader, trainer.num_training_batches, trainer.num_val_batches]
    model = _module(framework, seen)
    trainer.fit(model)
    seen["after fit"] = {
        "train_dataloader length": len(trainer.train_dataloader),
        "val_dataloaders length": len(trainer.val_dataloaders),
        "num_training_batches": trainer.num_training_batches,
        "num_val_batches": trainer.num_val_batches,
        "num_sanity_val_batches": trainer.num_sanity_val_batches,
        "estimated_stepping_batches": trainer.estimated_stepping_batches,
        "global_step": trainer.global_step,
    }
    path = root / "saved.ckpt"
    trainer.save_checkpoint(path)
    test_loader = _data(40, batch_size=16)
    trainer.test(model, test_loader, verbose=False)
    seen["after test"] = [trainer.test_dataloaders is test_loader, trainer.num_test_batches, trainer.ckpt_path]
    trainer.validate(model, _data(8), str(path), verbose=False)  # ckpt_path third, as Lightning's order has it
    seen["after validate"] = [Path(trainer.ckpt_path).name, trainer.num_val_batches]
    predict_loader = _data(20, batch_size=5)
    trainer.predict(model, predict_loader)
    seen["after predict"] = [trainer.predict_dataloaders is predict_loader, trainer.num_predict_batches]
    return seen


@pytest.mark.parametrize(
    "options",
    [
        {"max_epochs": 3},
        {"max_epochs": 2, "accumulate_grad_batches": 2, "limit_train_batches": 0.5},
        {"max_steps": 7},
        {"max_epochs": 4, "max_steps": 9, "limit_val_batches": 2, "num_sanity_val_steps": 5},
    ],
    ids=["epochs", "accumulating-limited", "max_steps", "both-limits"],
)
def test_loaders_counts_and_estimated_steps_match(options: dict[str, Any], tmp_path: Path) -> None:
    expected = _calls(lightning, tmp_path / "lightning", options)
    seen = _calls(accelplug, tmp_path / "accelplug", options)
    assert seen == expected
    assert seen["stepping batches in configure_optimizers"] == seen["after fit"]["estimated_stepping_batches"]
    assert any(seen["is_last_batch"]) and not all(seen["is_last_batch"])


def test_estimated_stepping_batches_without_an_epoch_limit() -> None:
    for options in ({"max_epochs": -1}, {"max_epochs": -1, "max_steps": 12}, {"max_steps": 12}):
        ours = _trainer(accelplug, **options).estimated_stepping_batches
        assert ours == _trainer(lightning, **options).estimated_stepping_batches, options
    assert _trainer(accelplug, max_epochs=-1).estimated_stepping_batches == math.inf


def test_a_ckpt_path_set_on_the_trainer_is_restored_by_the_next_call(tmp_path: Path) -> None:
    def run(framework: Any, root: Path) -> list[Any]:
        seen: dict[str, Any] = {}
        first = _trainer(framework, default_root_dir=root, max_epochs=1)
        first.fit(_module(framework, seen))
        first.save_checkpoint(root / "one.ckpt")
        trainer = _trainer(framework, default_root_dir=root, max_epochs=2)
        trainer.ckpt_path = str(root / "one.ckpt")
        trainer.fit(_module(framework, seen))
        return [trainer.global_step, Path(trainer.ckpt_path).name]

    assert run(accelplug, tmp_path / "a") == run(lightning, tmp_path / "l")


def test_print_prints_on_the_first_process(capsys: pytest.CaptureFixture[str]) -> None:
    _trainer(accelplug).print("hello", 3, sep="-")
    assert capsys.readouterr().out == "hello-3\n"


def test_init_module_builds_in_the_precisions_dtype() -> None:
    for framework in (lightning, accelplug):
        with _trainer(framework, precision="bf16-true").init_module():
            layer = torch.nn.Linear(2, 2)
        assert layer.weight.dtype == torch.bfloat16 and layer.weight.device.type == "cpu", framework.__name__


def test_save_checkpoint_takes_lightnings_arguments(tmp_path: Path) -> None:
    trainer = _trainer(accelplug, default_root_dir=tmp_path, max_steps=1)
    trainer.fit(_module(accelplug, {}))
    trainer.save_checkpoint(filepath=tmp_path / "full.ckpt")
    trainer.save_checkpoint(tmp_path / "weights.ckpt", True)
    full = torch.load(tmp_path / "full.ckpt", weights_only=False)
    weights = torch.load(tmp_path / "weights.ckpt", weights_only=False)
    assert "optimizer_states" in full and "optimizer_states" not in weights
    with pytest.raises(accelplug.MisconfigurationException, match="storage_options"):
        trainer.save_checkpoint(tmp_path / "x.ckpt", storage_options={"a": 1})


def test_a_module_connected_to_the_strategy_by_hand_is_the_trainers_lightning_module_and_model() -> None:
    seen = {}
    for name, framework in {"lightning": lightning, "accelplug": accelplug}.items():
        with quiet_lightning(framework):
            trainer = framework.Trainer(accelerator="cpu", devices=1, logger=False, enable_progress_bar=False)
        before = trainer.lightning_module
        model = framework.LightningModule()
        trainer.strategy.connect(model)
        seen[name] = (before, trainer.lightning_module is model, trainer.model is model)
    assert seen["accelplug"] == seen["lightning"] == (None, True, True)
