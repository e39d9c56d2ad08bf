"""The batch size of validate, test and predict is tuned as Lightning 2.6 tunes it (compared side by side): the
search runs at the call's start, the call then runs with loaders of the size found, and nothing is counted as
progress; several loaders are refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")
CALLS = ["validate", "test", "predict"]


def _module(framework: Any, loaders: int = 1) -> Any:
    class Sized(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.batch_size = 2
            self.layer = torch.nn.Linear(2, 1)
            self.batches_seen: list[int] = []

        def _loaders(self) -> Any:
            made = [DataLoader(TensorDataset(torch.randn(64, 2)), batch_size=self.batch_size) for _ in range(loaders)]
            return made[0] if loaders == 1 else made

        def _step(self, batch: Any, *args: Any) -> Any:
            self.batches_seen.append(len(batch[0]))
            return self.layer(batch[0])

        validation_step = test_step = predict_step = _step
        val_dataloader = test_dataloader = predict_dataloader = _loaders

    return Sized()


def _trainer(framework: Any, root: Path, **options: Any) -> Any:
    return framework.Trainer(
        accelerator="cpu",
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=root / framework.__name__,
        **options,
    )


def test_the_tuner_finds_lightnings_size_for_a_test_call(tmp_path: Path) -> None:
    call = "test"  # the tuner's route is the same for validate and predict (the callback's test covers the three)
    found = {}
    for framework in (lightning, accelplug):
        module, trainer = _module(framework), _trainer(framework, tmp_path)
        with quiet_lightning(framework):
            found[framework.__name__] = framework.pytorch.tuner.Tuner(trainer).scale_batch_size(
                module, method=call, max_trials=3
            )
        assert module.batch_size == found[framework.__name__]
        assert trainer.global_step == 0
    assert found["accelplug"] == found["lightning"] == 8


@pytest.mark.parametrize("call", CALLS)
def test_the_finder_callback_runs_the_call_at_the_size_found(tmp_path: Path, call: str) -> None:
    sizes = {}
    for framework in (lightning, accelplug):
        module = _module(framework)
        trainer = _trainer(framework, tmp_path, callbacks=[framework.pytorch.callbacks.BatchSizeFinder(max_trials=3)])
        with quiet_lightning(framework):
            getattr(trainer, call)(module)
        sizes[framework.__name__] = (module.batch_size, module.batches_seen[-8:])  # the call's own batches
    assert sizes["accelplug"] == sizes["lightning"] == (8, [8] * 8)


def test_several_evaluation_loaders_are_refused(tmp_path: Path) -> None:
    for framework, error in (
        (lightning, lightning.pytorch.utilities.exceptions.MisconfigurationException),
        (accelplug, accelplug.errors.MisconfigurationException),
    ):
        tuner = framework.pytorch.tuner.Tuner(_trainer(framework, tmp_path))
        with pytest.raises(error, match="Batch size finder cannot be used with multiple val dataloaders"):
            tuner.scale_batch_size(_module(framework, loaders=2), method="validate")


def test_several_loaders_are_refused_at_setup_before_the_loops_own_checks(tmp_path: Path) -> None:
    # The step takes no dataloader_idx, which the loop would refuse with two loaders: the finder's setup speaks first.
    for framework, error in (
        (lightning, lightning.pytorch.utilities.exceptions.MisconfigurationException),
        (accelplug, accelplug.errors.MisconfigurationException),
    ):
        module = _module(framework, loaders=2)
        module.validation_step = lambda batch, batch_idx: None
        tuner = framework.pytorch.tuner.Tuner(_trainer(framework, tmp_path))
        with pytest.raises(error, match="Batch size finder cannot be used with multiple val dataloaders"):
            tuner.scale_batch_size(module, method="validate")
        assert module.batches_seen == []


@pytest.mark.parametrize("call", ["test", "predict"])
def test_several_loaders_given_to_the_call_are_refused_too(tmp_path: Path, call: str) -> None:
    for framework in (lightning, accelplug):
        finder = framework.pytorch.callbacks.BatchSizeFinder()
        trainer = _trainer(framework, tmp_path, callbacks=[finder])
        given = [DataLoader(TensorDataset(torch.randn(8, 2)), batch_size=2) for _ in range(2)]
        with pytest.raises(Exception, match=f"Batch size finder cannot be used with multiple {call} dataloaders"):
            getattr(trainer, call)(_module(framework), dataloaders=given)
