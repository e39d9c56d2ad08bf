"""The Tuner's bad input: each mistake is a MisconfigurationException naming the value and what is accepted,
raised before any fit starts; and the out-of-memory test the batch-size search relies on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from accelplug.callbacks import BatchSizeFinder, LearningRateFinder
from accelplug.errors import MisconfigurationException
from accelplug.pytorch.tuner import Tuner
from accelplug.utilities.memory import is_oom_error


class Tiny(accelplug.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(2, 1)
        self.batch_size = 4

    def training_step(self, batch: Any, batch_idx: int) -> Any:
        return self.layer(batch[0]).pow(2).mean()

    def train_dataloader(self) -> Any:
        return DataLoader(TensorDataset(torch.randn(16, 2)), batch_size=self.batch_size)

    def configure_optimizers(self) -> Any:
        return torch.optim.SGD(self.parameters(), lr=0.1)


@pytest.fixture
def tuner(tmp_path: Path) -> Tuner:
    trainer = accelplug.Trainer(
        max_epochs=1, logger=False, enable_checkpointing=False, enable_progress_bar=False, default_root_dir=tmp_path
    )
    return Tuner(trainer)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda t, m: t.lr_find(m, mode="exponental"), r"mode.*'exponental'.*Did you mean 'exponential'"),
        (lambda t, m: t.lr_find(m, num_training=0), r"num_training=0: expected an int >= 1"),
        (lambda t, m: t.lr_find(m, min_lr=-1.0), r"min_lr=-1.0"),
        (lambda t, m: t.lr_find(m, method="test"), r"method='fit' is the only valid"),
        (lambda t, m: t.lr_find(m, dataloaders=[1]), r"`dataloaders` argument should be None"),
        (lambda t, m: t.scale_batch_size(m, mode="binary"), r"mode.*'binary'.*Did you mean 'binsearch'"),
        (lambda t, m: t.scale_batch_size(m, margin=1.5), r"margin.*between 0 and 1.*1.5"),
        (lambda t, m: t.scale_batch_size(m, steps_per_trial=0), r"steps_per_trial=0"),
        (lambda t, m: t.scale_batch_size(m, method="fitt"), r"method 'fitt' is invalid.*Did you mean 'fit'"),
        (lambda t, m: t.scale_batch_size(m, method="test", train_dataloaders=[1]), r"should be None"),
    ],
)
def test_bad_arguments_are_refused_before_anything_runs(tuner: Tuner, call: Any, match: str) -> None:
    module = Tiny()
    with pytest.raises(MisconfigurationException, match=match):
        call(tuner, module)
    trainer = tuner._trainer
    assert trainer.global_step == 0 and trainer._run is None  # refused before any fit started
    assert not any(isinstance(c, (LearningRateFinder, BatchSizeFinder)) for c in trainer.callbacks)


def test_a_module_without_a_learning_rate_attribute_is_named(tuner: Tuner) -> None:
    with pytest.raises(AttributeError, match=r"one of these fields: \('lr', 'learning_rate'\)") as raised:
        tuner.lr_find(Tiny())
    assert isinstance(raised.value, MisconfigurationException)  # both Lightning's type and accelplug's
    with pytest.raises(MisconfigurationException, match="attribute name for the learning rate was set to rate"):
        tuner.lr_find(Tiny(), attr_name="rate")


def test_a_missing_batch_size_field_and_loaders_given_to_fit_are_refused(tuner: Tuner) -> None:
    module = Tiny()
    with pytest.raises(MisconfigurationException, match="Field size not found in `model`"):
        tuner.scale_batch_size(module, batch_arg_name="size")
    loader = DataLoader(TensorDataset(torch.randn(8, 2)), batch_size=2)
    with pytest.raises(MisconfigurationException, match="cannot be used with dataloaders passed directly"):
        tuner.scale_batch_size(module, train_dataloaders=loader)
    assert not any(isinstance(c, BatchSizeFinder) for c in tuner._trainer.callbacks)  # taken out again


def test_a_trainer_that_already_has_the_callback_is_refused(tmp_path: Path) -> None:
    trainer = accelplug.Trainer(logger=False, callbacks=[LearningRateFinder()], default_root_dir=tmp_path)
    with pytest.raises(MisconfigurationException, match="already configured with a `LearningRateFinder`"):
        Tuner(trainer).lr_find(Tiny())


def test_callback_arguments_are_checked_when_made() -> None:
    with pytest.raises(MisconfigurationException, match="Did you mean 'power'"):
        BatchSizeFinder(mode="powr")
    with pytest.raises(MisconfigurationException, match="early_stop_threshold='4'"):
        LearningRateFinder(early_stop_threshold="4")  # type: ignore[arg-type]


def test_lr_find_outside_a_call_says_how_to_run_it() -> None:
    trainer = accelplug.Trainer(logger=False)
    with pytest.raises(MisconfigurationException, match=r"Tuner\(trainer\)\.lr_find\(model\)"):
        LearningRateFinder().lr_find(trainer, Tiny())


@pytest.mark.parametrize(
    ("error", "oom"),
    [
        (RuntimeError("CUDA out of memory. Tried to allocate 20.00 MiB"), True),
        (torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB"), True),
        (RuntimeError("cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a ..."), True),
        (RuntimeError("[enforce fail at alloc_cpu.cpp:114] DefaultCPUAllocator: can't allocate memory: 1 bytes"), True),
        (RuntimeError("CUDA error: device-side assert triggered"), False),
        (RuntimeError("CUDA out of memory", "a second argument"), False),
        (ValueError("CUDA out of memory"), False),
    ],
)
def test_out_of_memory_is_told_from_other_errors_as_lightning_tells_it(error: BaseException, oom: bool) -> None:
    lightnings = pytest.importorskip("lightning.pytorch.utilities.memory").is_oom_error

    assert is_oom_error(error) is oom is lightnings(error)
