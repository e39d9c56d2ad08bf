"""A ``DataLoader``'s worker processes end when they do in Lightning 2.6.

``persistent_workers=True`` keeps the workers alive from one epoch to the next; Lightning's loops stop them when a
fit, validate, test or predict call ends (also one that failed), so no process with a copy of the dataset outlives
the call. Counted for real: the live children of this process (each worker is one), one worker per loader.
Without it, an epoch's workers live on until the loop's next epoch starts its own (or the call ends): the loop
keeps its iterator, even past a limit on the batches, and a callback at the epoch's end still sees them.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.dataloader import _MultiProcessingDataLoaderIter

import accelplug

lightning = pytest.importorskip("lightning", reason="the counts are compared with lightning's, not installed here")

FRAMEWORKS = {"lightning": lightning, "accelplug": accelplug}


def _module(framework: Any, *, fail: bool = False) -> Any:
    class Module(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            if fail:
                raise RuntimeError("the step failed")
            return self.layer(batch[0]).sum()

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            self.layer(batch[0])

        def test_step(self, batch: Any, batch_idx: int) -> None:
            self.layer(batch[0])

        def predict_step(self, batch: Any, batch_idx: int) -> Any:
            return self.layer(batch[0])

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return Module()


def _loader() -> DataLoader[Any]:
    return DataLoader(TensorDataset(torch.randn(8, 2)), batch_size=4, num_workers=1, persistent_workers=True)


def _trainer(framework: Any, tmp_path: Path) -> Any:
    return framework.Trainer(
        accelerator="cpu", devices=1, max_epochs=1, logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False, default_root_dir=tmp_path,
    )  # fmt: skip


def _live_workers() -> int:
    return len(multiprocessing.active_children())


@pytest.mark.filterwarnings("ignore:The '\\w+_dataloader' does not have many workers")
@pytest.mark.parametrize("call", ["fit", "validate", "test", "predict"])
@pytest.mark.parametrize("name", FRAMEWORKS)
def test_persistent_workers_are_stopped_when_the_call_ends(name: str, call: str, tmp_path: Path) -> None:
    framework = FRAMEWORKS[name]
    trainer, before = _trainer(framework, tmp_path), _live_workers()
    loader = _loader()
    if call == "fit":
        trainer.fit(_module(framework), loader, _loader())
    else:
        getattr(trainer, call)(_module(framework), loader)
    assert _live_workers() == before


@pytest.mark.filterwarnings("ignore:The '\\w+_dataloader' does not have many workers")
# Lightning's note on the validation_step this fit has no loader for
@pytest.mark.filterwarnings("ignore:You defined a `validation_step` but have no `val_dataloader`")
@pytest.mark.parametrize("name", FRAMEWORKS)
def test_persistent_workers_are_stopped_when_the_fit_fails(name: str, tmp_path: Path) -> None:
    framework = FRAMEWORKS[name]
    trainer, before = _trainer(framework, tmp_path), _live_workers()
    with pytest.raises(RuntimeError, match="the step failed"):
        trainer.fit(_module(framework, fail=True), _loader())
    assert _live_workers() == before


class _Recording(DataLoader):  # type: ignore[type-arg]
    """A loader that writes down the trainer's epoch each time one of its iterators stops its workers."""

    def __init__(self, trainer: Any, persistent_workers: bool = False) -> None:
        data = TensorDataset(torch.randn(16, 2))
        super().__init__(data, batch_size=2, num_workers=1, persistent_workers=persistent_workers)
        self.trainer = trainer
        self.stopped_at: list[int] = []
        #: every call of ``_shutdown_workers``, also those on stopped workers (what Lightning's own test counts)
        self.asked_at: list[int] = []

    def _get_iterator(self) -> Any:
        loader = self

        class Recorded(_MultiProcessingDataLoaderIter):
            def _shutdown_workers(self) -> None:
                loader.asked_at.append(loader.trainer.current_epoch)
                if not self._shutdown:
                    loader.stopped_at.append(loader.trainer.current_epoch)
                super()._shutdown_workers()

        return Recorded(self)


def _recorded_fit(
    framework: Any, tmp_path: Path, *, fail_at_epoch_end: bool, persistent: bool = False
) -> tuple[_Recording, _Recording]:
    """The train and val loaders of a 3-epoch fit of 2 batches an epoch, with what they recorded; with
    ``fail_at_epoch_end`` a callback fails at the end of epoch 1 (the exception's traceback keeps the loop's frames)."""

    class Fails(framework.Callback):  # type: ignore[misc, name-defined]
        def on_train_epoch_end(self, trainer: Any, module: Any) -> None:
            if trainer.current_epoch == 1:
                raise RuntimeError("stopped by the callback")

    trainer = framework.Trainer(
        accelerator="cpu", devices=1, max_epochs=3, limit_train_batches=2, limit_val_batches=2, logger=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False, default_root_dir=tmp_path,
        callbacks=[Fails()] if fail_at_epoch_end else [],
    )  # fmt: skip
    train, val = _Recording(trainer, persistent), _Recording(trainer, persistent)
    if fail_at_epoch_end:
        with pytest.raises(RuntimeError, match="stopped by the callback"):
            trainer.fit(_module(framework), train, val)
    else:
        trainer.fit(_module(framework), train, val)
    return train, val


@pytest.mark.filterwarnings("ignore:The '\\w+_dataloader' does not have many workers")
@pytest.mark.parametrize("fail_at_epoch_end", [False, True], ids=["fit", "failed-fit"])
def test_an_epochs_workers_stop_when_the_next_epoch_starts_its_own_as_in_lightning(
    fail_at_epoch_end: bool, tmp_path: Path
) -> None:
    stopped = {}
    for name, framework in FRAMEWORKS.items():
        train, val = _recorded_fit(framework, tmp_path / name, fail_at_epoch_end=fail_at_epoch_end)
        stopped[name] = (train.stopped_at, val.stopped_at)
    assert stopped["accelplug"] == stopped["lightning"]
    assert stopped["accelplug"] == (([1, 1], [0, 1, 1]) if fail_at_epoch_end else ([1, 2, 3], [0, 1, 2, 3]))


@pytest.mark.filterwarnings("ignore:The '\\w+_dataloader' does not have many workers")
@pytest.mark.parametrize("persistent", [False, True], ids=["workers", "persistent-workers"])
def test_after_a_failed_fit_each_iterator_is_asked_to_stop_as_often_as_in_lightning(
    persistent: bool, tmp_path: Path
) -> None:
    asked = {}
    for name, framework in FRAMEWORKS.items():
        train, _ = _recorded_fit(framework, tmp_path / name, fail_at_epoch_end=True, persistent=persistent)
        asked[name] = train.asked_at
    assert asked["accelplug"] == asked["lightning"] == [1, 1]


def _fails_at_second_batch(framework: Any) -> Any:
    class Module(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            if batch_idx == 1:
                raise RuntimeError("the second step failed")
            inputs = batch["a"][0] if isinstance(batch, dict) else batch[0]
            return self.layer(inputs).sum()

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return Module()


@pytest.mark.filterwarnings("ignore:The '\\w+_dataloader' does not have many workers")
@pytest.mark.parametrize(
    ("name", "form"),
    [("lightning", "loader"), ("accelplug", "loader"), ("accelplug", "profiled"), ("accelplug", "dict")],
)
def test_workers_stop_when_the_fit_fails_mid_epoch_though_the_traceback_is_kept(
    name: str, form: str, tmp_path: Path
) -> None:
    framework = FRAMEWORKS[name]
    trainer = framework.Trainer(
        accelerator="cpu", devices=1, max_epochs=1, logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False, default_root_dir=tmp_path,
        profiler="simple" if form == "profiled" else None,
    )  # fmt: skip
    loader = DataLoader(TensorDataset(torch.randn(16, 2)), batch_size=2, num_workers=2)  # not persistent
    before = _live_workers()
    with pytest.raises(RuntimeError, match="the second step failed") as failure:
        trainer.fit(_fails_at_second_batch(framework), {"a": loader} if form == "dict" else loader)
    assert failure.value.__traceback__ is not None  # kept, with the loop's frames, as a notebook keeps it
    assert _live_workers() == before
