"""The calls the Trainer makes on its loggers, recorded under Lightning 2.6.6 and under accelplug and compared.

One recording logger class per framework (a subclass of that framework's ``Logger``) writes down every call
in order: ``log_hyperparams`` with what it received, ``log_graph``, ``log_metrics`` with its keys and step,
``save``, ``after_save_checkpoint`` and ``finalize`` with its status. The same module, datamodule and
callbacks then run ``fit``, ``validate`` and ``test`` (and a fit that raises) under each framework.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from accelplug.loggers.protocol import LoggerFailed
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare with Lightning (the test extra has it)")
logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)


def _recording_logger(framework: Any) -> Any:
    base = framework.pytorch.loggers.Logger if hasattr(framework, "pytorch") else framework.loggers.Logger

    class Recording(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[tuple[Any, ...]] = []

        @property
        def name(self) -> str:
            return "recording"

        @property
        def version(self) -> int:
            return 0

        def log_hyperparams(self, params: Any, *args: Any, **kwargs: Any) -> None:
            self.calls.append(("log_hyperparams", dict(params)))

        def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
            self.calls.append(("log_metrics", tuple(sorted(metrics)), step))

        def log_graph(self, model: Any, input_array: Any = None) -> None:
            self.calls.append(("log_graph", type(model).__name__))

        def save(self) -> None:
            self.calls.append(("save",))

        def after_save_checkpoint(self, checkpoint_callback: Any) -> None:
            self.calls.append(("after_save_checkpoint", checkpoint_callback.__class__.__name__))  # through a proxy

        def finalize(self, status: str) -> None:
            self.calls.append(("finalize", status))

    return Recording()


def _classes(framework: Any) -> tuple[Any, Any]:
    class Net(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self, width: int = 4, lr: float = 0.05, fail_at: int = -1) -> None:
            super().__init__()
            self.save_hyperparameters()
            self.net = torch.nn.Sequential(torch.nn.Linear(3, width), torch.nn.Tanh(), torch.nn.Linear(width, 1))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.net(x)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            if self.global_step == self.hparams.fail_at:
                raise RuntimeError("the model broke")
            loss = torch.nn.functional.mse_loss(self(batch[0]), batch[1])
            self.log("train_loss", loss)
            return loss

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            self.log("val_loss", torch.nn.functional.mse_loss(self(batch[0]), batch[1]))

        def test_step(self, batch: Any, batch_idx: int) -> None:
            self.log("test_loss", torch.nn.functional.mse_loss(self(batch[0]), batch[1]))

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)

    class Data(framework.LightningDataModule):  # type: ignore[misc, name-defined]
        def __init__(self, batch_size: int = 8) -> None:
            super().__init__()
            self.save_hyperparameters()

        def _loader(self, seed: int) -> DataLoader[Any]:
            generator = torch.Generator().manual_seed(seed)
            x = torch.randn(32, 3, generator=generator)
            return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=self.hparams.batch_size)

        def train_dataloader(self) -> DataLoader[Any]:
            return self._loader(0)

        def val_dataloader(self) -> DataLoader[Any]:
            return self._loader(1)

        def test_dataloader(self) -> DataLoader[Any]:
            return self._loader(2)

    return Net, Data


def _run(framework: Any, tmp_path: Path, *, fail_at: int = -1) -> list[tuple[Any, ...]]:
    torch.manual_seed(0)
    net_class, data_class = _classes(framework)
    logger = _recording_logger(framework)
    checkpoint = framework.pytorch.callbacks.ModelCheckpoint if hasattr(framework, "pytorch") else None
    checkpoint = checkpoint or framework.ModelCheckpoint
    trainer = framework.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=2,
        log_every_n_steps=2,
        logger=logger,
        callbacks=[checkpoint(dirpath=tmp_path / "ckpts", save_last=False)],
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
    )
    model, data = net_class(fail_at=fail_at), data_class()
    with quiet_lightning():  # only Lightning's own warnings
        if fail_at >= 0:
            with pytest.raises(RuntimeError, match="the model broke"):
                trainer.fit(model, datamodule=data)
            return list(logger.calls)
        trainer.fit(model, datamodule=data)
        trainer.validate(model, datamodule=data, verbose=False)
        trainer.test(model, datamodule=data, verbose=False)
    return list(logger.calls)


def test_fit_validate_and_test_make_lightnings_logger_calls_in_lightnings_order(tmp_path: Path) -> None:
    expected = _run(lightning, tmp_path / "lightning")
    calls = _run(accelplug, tmp_path / "ours")
    assert calls == expected  # the rows' steps included (Lightning's count of batches that stepped)
    assert ("log_hyperparams", {"width": 4, "lr": 0.05, "fail_at": -1, "batch_size": 8}) in calls
    assert calls.count(("after_save_checkpoint", "ModelCheckpoint")) == 2  # one checkpoint per epoch
    assert calls.count(("finalize", "success")) == 3


def test_a_fit_that_raises_finalizes_the_loggers_as_failed_as_lightning_does(tmp_path: Path) -> None:
    expected = _run(lightning, tmp_path / "lightning", fail_at=5)
    calls = _run(accelplug, tmp_path / "ours", fail_at=5)
    assert calls == expected  # the rows' steps included (Lightning's count of batches that stepped)
    assert calls[-1] == ("finalize", "failed")


def test_a_logger_that_raises_is_named(tmp_path: Path) -> None:
    class Broken:
        def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
            pass

        def log_hyperparams(self, params: Any) -> None:
            raise ConnectionError("tracker unreachable")

    net_class, data_class = _classes(accelplug)
    options = {"accelerator": "cpu", "devices": 1, "max_epochs": 1, "enable_progress_bar": False}
    trainer = accelplug.Trainer(**options, logger=Broken(), default_root_dir=tmp_path)
    message = r"Broken raised in log_hyperparams\(\): ConnectionError: tracker unreachable"
    with pytest.raises(LoggerFailed, match=message):
        trainer.fit(net_class(), datamodule=data_class())


def _steps(framework: Any, tmp_path: Path, variant: str) -> list[tuple[Any, ...]]:
    """The ``log_metrics`` calls (keys and step) of a 2-epoch fit and a validate, in one of the variants whose
    count of batches that stepped differs from ``global_step`` or from the batch count."""
    torch.manual_seed(0)
    net_class, data_class = _classes(framework)
    options: dict[str, Any] = {"log_every_n_steps": 1}
    if variant == "accumulate":
        options["accumulate_grad_batches"] = 3
    elif variant == "val-mid-epoch":
        options["val_check_interval"] = 2
    model = net_class()
    if variant == "manual-two-optimizers":

        class Manual(net_class):  # type: ignore[misc, valid-type]
            def __init__(self) -> None:
                super().__init__()
                self.automatic_optimization = False

            def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
                first, second = self.optimizers()  # type: ignore[misc]
                loss = torch.nn.functional.mse_loss(self(batch[0]), batch[1])
                self.manual_backward(loss)
                first.step()
                if batch_idx % 2:
                    second.step()
                self.log("train_loss", loss)
                return loss

            def configure_optimizers(self) -> Any:
                return [
                    torch.optim.SGD(self.net[0].parameters(), 0.05),
                    torch.optim.SGD(self.net[2].parameters(), 0.05),
                ]

        model = Manual()
    logger = _recording_logger(framework)
    trainer = framework.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=2,
        logger=logger,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        default_root_dir=tmp_path,
        **options,
    )
    with warnings.catch_warnings():
        # Lightning's own advice for these tiny loaders (num_workers, log_every_n_steps): not this test's subject
        warnings.filterwarnings("ignore", message=".*(does not have many workers|log_every_n_steps).*")
        trainer.fit(model, datamodule=data_class())
        trainer.validate(model, datamodule=data_class(), verbose=False)
    return [call for call in logger.calls if call[0] == "log_metrics"]


@pytest.mark.parametrize("variant", ["accumulate", "val-mid-epoch", "manual-two-optimizers"])
def test_rows_carry_lightnings_step(variant: str, tmp_path: Path) -> None:
    expected = _steps(lightning, tmp_path / "lightning", variant)
    assert _steps(accelplug, tmp_path / "ours", variant) == expected
