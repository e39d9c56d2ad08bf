"""A fit with no training batches returns without training, as Lightning 2.6's does.

A loader whose length is zero (an empty dataset, ``drop_last=True`` with fewer samples than a batch) gives
Lightning's warning ("Total length of `DataLoader` across ranks is zero") and ``fit`` returns after the sanity
check: ``on_fit_start`` and ``on_fit_end`` run, the training hooks do not, no step is taken. ``limit_train_batches=0``
skips training the same way, without the warning; a fraction of an epoch that rounds to no batch is refused, as
Lightning refuses it.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from accelplug.errors import MisconfigurationException
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")

RECORDED = (
    "setup",
    "on_fit_start",
    "on_sanity_check_start",
    "on_validation_start",
    "on_train_start",
    "on_train_epoch_start",
    "on_train_end",
    "on_fit_end",
    "teardown",
)


def _loader(n: int) -> DataLoader[Any]:
    return DataLoader(TensorDataset(torch.randn(n, 2, generator=torch.Generator().manual_seed(0))), batch_size=4)


def _run(framework: Any, root: Path, train: DataLoader[Any], **options: Any) -> tuple[Any, list[str]]:
    calls: list[str] = []

    class Recorder(framework.Callback):  # type: ignore[misc, name-defined]
        pass

    for name in RECORDED:
        setattr(Recorder, name, lambda self, *args, _name=name, **kwargs: calls.append(_name))

    class Module(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            return self.layer(batch[0]).sum()

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            calls.append("validation_step")

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    trainer = framework.Trainer(
        accelerator="cpu",
        max_epochs=2,
        logger=False,
        enable_progress_bar=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        num_sanity_val_steps=1,
        callbacks=[Recorder()],
        default_root_dir=root,
        **options,
    )
    with quiet_lightning(framework):
        trainer.fit(Module(), train, _loader(4))
    return trainer, calls


def test_an_empty_training_loader_warns_and_fit_returns_as_in_lightning(tmp_path: Path) -> None:
    seen = {}
    for framework in (accelplug, lightning):
        with pytest.warns(UserWarning, match=r"Total length of `DataLoader` across ranks is zero"):
            trainer, calls = _run(framework, tmp_path / framework.__name__, _loader(0))
        seen[framework.__name__] = calls, trainer.global_step, trainer.current_epoch
    assert seen["accelplug"] == seen["lightning"]
    calls, _, _ = seen["accelplug"]
    assert "on_fit_end" in calls and "on_train_start" not in calls


def test_limit_train_batches_zero_skips_training_without_a_warning_as_in_lightning(tmp_path: Path) -> None:
    seen = {}
    for framework in (accelplug, lightning):
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message="Total length")
            trainer, calls = _run(framework, tmp_path / framework.__name__, _loader(8), limit_train_batches=0)
        seen[framework.__name__] = calls, trainer.global_step
    assert seen["accelplug"] == seen["lightning"]
    assert seen["accelplug"][1] == 0


def test_a_fraction_of_the_epoch_that_rounds_to_no_batch_is_refused_as_in_lightning(tmp_path: Path) -> None:
    errors = {}
    for framework in (accelplug, lightning):
        with pytest.raises(MisconfigurationException if framework is accelplug else Exception) as caught:
            _run(framework, tmp_path / framework.__name__, _loader(8), limit_train_batches=0.1)
        errors[framework.__name__] = caught.value
    assert type(errors["lightning"]).__name__ == "MisconfigurationException"
    for error in errors.values():
        assert "You requested to check 0.1 of the `train_dataloader` but 0.1 * 2 < 1" in str(error)
        assert "limit_train_batches=0.5" in str(error)
