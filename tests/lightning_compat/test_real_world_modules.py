"""Real-world-shaped Lightning modules train with ``import accelplug as L`` and nothing else changed."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
import torch
import yaml
from torch.utils.data import DataLoader

import accelplug as L
from accelplug import MisconfigurationException

from .real_world import blobs, build, low_rank_data

MODULES = build(L)


def _trainer(tmp_path: Path, **options: Any) -> L.Trainer:
    defaults: dict[str, Any] = {
        "accelerator": "cpu",
        "devices": 1,
        "enable_progress_bar": False,
        "default_root_dir": tmp_path,
        "log_every_n_steps": 1,
        "logger": L.CSVLogger(tmp_path),  # these tests read metrics.csv (Lightning's default is TensorBoard)
    }
    return L.Trainer(**{**defaults, **options})


def _csv(trainer: L.Trainer) -> list[dict[str, str]]:
    assert trainer.metrics_path is not None
    with trainer.metrics_path.open() as file:
        return list(csv.DictReader(file))


def _column(rows: list[dict[str, str]], name: str) -> list[float]:
    return [float(r[name]) for r in rows if r.get(name)]


def test_autoencoder_with_hyperparameters_trains_validates_and_tests(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = MODULES["LitAutoEncoder"](code_dim=4, lr=1e-2)
    assert dict(model.hparams) == {"code_dim": 4, "lr": 1e-2}
    data = low_rank_data()
    train = DataLoader(data, batch_size=32, shuffle=True)
    val = DataLoader(low_rank_data(64, seed=1), batch_size=32)
    trainer = _trainer(tmp_path, max_epochs=8)
    trainer.fit(model, train, val)
    (results,) = trainer.test(model, DataLoader(low_rank_data(50, seed=2), batch_size=16), verbose=False)

    rows = _csv(trainer)
    losses = _column(rows, "train_loss")
    assert len(losses) == 64 and losses[-1] < losses[0] / 4, "the loss goes down"
    assert len(_column(rows, "val_loss")) == 8, "one validation value per epoch (the sanity check is not logged)"
    assert _column(rows, "test_loss") == [pytest.approx(results["test_loss"])]
    with torch.no_grad():
        x = low_rank_data(50, seed=2).tensors[0]
        sizes, errors = [16, 16, 16, 2], []
        for i in range(4):
            chunk = x[16 * i : 16 * i + 16]
            errors.append(float(torch.nn.functional.mse_loss(model(chunk), chunk)))
        expected = sum(e * s for e, s in zip(errors, sizes, strict=True)) / 50
    assert results["test_loss"] == pytest.approx(expected, rel=1e-5), "epoch value = mean weighted by batch size"
    per_epoch = [call for epoch in range(8) for call in ("on_validation_epoch_end", f"on_train_epoch_end:{epoch}")]
    assert model.hook_calls == [
        "on_validation_epoch_end",  # the sanity check, before training
        "on_train_start",
        *per_epoch,
        "on_fit_end",
        "on_test_epoch_end",
    ]
    checkpoint = torch.load(trainer.checkpoint_callback.best_model_path, weights_only=True)  # type: ignore[union-attr]
    assert checkpoint["hyper_parameters"] == {"code_dim": 4, "lr": 1e-2}
    assert yaml.safe_load((Path(trainer.log_dir) / "hparams.yaml").read_text()) == {"code_dim": 4, "lr": 1e-2}


def test_classifier_logs_torchmetrics_objects_and_a_plateau_scheduler_watches_one(tmp_path: Path) -> None:
    pytest.importorskip("torchmetrics")
    torch.manual_seed(0)
    model = MODULES["LitClassifier"]()
    train = DataLoader(blobs(300), batch_size=32, shuffle=True)
    val_set = blobs(90, seed=1)
    trainer = _trainer(tmp_path, max_epochs=4)
    trainer.fit(model, train, DataLoader(val_set, batch_size=32))

    metrics = trainer.callback_metrics
    assert {"train_acc_step", "train_acc_epoch", "train_acc", "val_acc", "val_loss", "batch_index"} <= set(metrics)
    with torch.no_grad():
        x, y = val_set.tensors
        accuracy = float((model(x).argmax(1) == y).float().mean())
    assert float(metrics["val_acc"]) == pytest.approx(accuracy), "the Metric was computed over the whole epoch"
    assert float(metrics["val_acc"]) > 0.9
    # 300 samples in batches of 32: nine of 32, one of 12; the epoch mean of batch_idx is weighted by size.
    assert float(metrics["batch_index"]) == pytest.approx((32 * sum(range(9)) + 12 * 9) / 300)
    rows = _csv(trainer)
    assert len(_column(rows, "train_acc_step")) == 40 and len(_column(rows, "train_acc_epoch")) == 4
    scheduler = trainer.lr_scheduler_configs[0].scheduler
    assert scheduler.last_epoch == 4, "ReduceLROnPlateau stepped once per epoch with val_acc"
    assert scheduler.best == pytest.approx(max(_column(rows, "val_acc")))


def test_gan_with_manual_optimization_and_two_optimizers(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = MODULES["GAN"]()
    real = torch.randn(512, 1) * 0.5 + 3.0
    loader = DataLoader(torch.utils.data.TensorDataset(real), batch_size=64, shuffle=True)
    with torch.no_grad():
        before = float(model(torch.randn(1000, 2)).mean())
    trainer = _trainer(tmp_path, max_epochs=25)
    trainer.fit(model, loader)
    with torch.no_grad():
        after = float(model(torch.randn(1000, 2)).mean())
    assert trainer.global_step == 2 * 8 * 25, "each optimizer step counts, as in Lightning's manual optimization"
    assert abs(after - 3.0) < abs(before - 3.0) / 3, f"generated mean {before:.2f} -> {after:.2f} (data mean 3)"
    assert all(model.frozen_during_generator_step), "toggle_optimizer froze the discriminator for the generator step"
    assert all(p.requires_grad for p in model.parameters()), "untoggle_optimizer restored requires_grad"
    assert {"g_loss", "d_loss"} <= set(trainer.callback_metrics)


def test_manual_optimization_refuses_automatic_accumulation(tmp_path: Path) -> None:
    loader = DataLoader(torch.utils.data.TensorDataset(torch.randn(8, 1)), batch_size=4)
    with pytest.raises(
        MisconfigurationException, match=r"Automatic gradient accumulation is not supported.*accumulate_grad_batches=2"
    ):
        _trainer(tmp_path, max_epochs=1, accumulate_grad_batches=2).fit(MODULES["GAN"](), loader)


def test_a_module_with_its_own_data_prepares_sets_up_and_trains(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = MODULES["OwnDataModel"](str(tmp_path))
    trainer = _trainer(tmp_path, max_epochs=5)
    trainer.fit(model)
    assert (tmp_path / "data.pt").is_file(), "prepare_data ran (once, on local rank 0)"
    assert model.stages == ["fit"]
    rows = _csv(trainer)
    assert _column(rows, "val_loss")[-1] < _column(rows, "val_loss")[0] / 10


def test_a_datamodule_drives_fit_and_test_with_its_stages_and_state(tmp_path: Path) -> None:
    torch.manual_seed(0)
    dm = MODULES["RegressionDataModule"]()
    model = MODULES["LinearOnDataModule"]()
    trainer = _trainer(tmp_path, max_epochs=4)
    trainer.fit(model, datamodule=dm)
    (results,) = trainer.test(model, datamodule=dm, verbose=False)
    assert dm.calls == ["prepare_data", "setup:fit", "teardown:fit", "prepare_data", "setup:test", "teardown:test"]
    assert results["test_loss"] < 0.05
    last = trainer.checkpoint_callback.best_model_path  # type: ignore[union-attr]
    saved = torch.load(last, weights_only=True)
    (key,) = [k for k in saved if k.endswith("RegressionDataModule")]  # Lightning's key: the class's __qualname__
    assert saved[key] == {"batch_size": 16}
    # Lightning also takes the datamodule positionally; and warns as accelplug does, the first fit's files being there
    with pytest.warns(UserWarning, match=r"Checkpoint directory .*version_0.checkpoints exists and is not empty"):
        trainer.fit(MODULES["LinearOnDataModule"](), dm)


def test_a_dqn_streaming_from_an_iterable_dataset_uses_global_step(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = MODULES["BanditDQN"]()
    trainer = _trainer(tmp_path, max_epochs=3)
    trainer.fit(model)
    assert trainer.global_step == 3 * 20, "every batch, a skipped one too, steps the optimizer (Lightning's rule)"
    assert model.skipped == 12
    assert model.epsilons[0] == 1.0 and model.epsilons[-1] == pytest.approx(0.05)
    assert model.epsilons == sorted(model.epsilons, reverse=True)
    losses = _column(_csv(trainer), "td_loss")
    assert sum(losses[-5:]) < sum(losses[:5]) / 3
