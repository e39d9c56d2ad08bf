"""When a fit makes its training iterator, relative to the hooks, as Lightning 2.6 makes it.

Lightning makes the first epoch's iterator (``iter()`` on the loader: its workers start, ``iter()``'s random draw
for their seeds is taken) before ``on_train_start``, also for a resumed fit; a later epoch's after the sampler's
``set_epoch`` and ``on_train_epoch_start``. What a user sees: the order of those calls, the workers' seeds, and the
order a shuffling loader draws when a hook draws random numbers or reseeds. Each is recorded for the same module
and data under both frameworks and compared; a resumed fit (from a checkpoint written at an epoch's end and from
one written inside an epoch) too.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, Dataset, Sampler, TensorDataset

from tests.callbacks.parity import FRAMEWORKS, quiet_lightning

EVENTS: list[str] = []


class _RecordingSampler(Sampler[int]):
    """Shuffles 8 indices as ``RandomSampler`` does (a seed drawn from torch's generator when a pass starts), and
    per epoch as ``DistributedSampler`` does (its epoch in the seed)."""

    def __init__(self) -> None:
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        EVENTS.append(f"set_epoch({epoch})")
        self.epoch = epoch

    def __iter__(self) -> Iterator[int]:
        EVENTS.append("sampler.__iter__")
        seed = int(torch.empty((), dtype=torch.int64).random_().item())
        yield from torch.randperm(8, generator=torch.Generator().manual_seed(seed + self.epoch)).tolist()

    def __len__(self) -> int:
        return 8


class _RecordingLoader(DataLoader):  # type: ignore[type-arg]
    def __iter__(self) -> Any:
        EVENTS.append("iter")
        return super().__iter__()


def _module(framework: Any, *, reseed: bool = False) -> Any:
    class Module(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            EVENTS.append(f"batch{[tensor.flatten().tolist() for tensor in batch]}")
            return self.layer(batch[0]).sum()

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

        def on_train_start(self) -> None:
            EVENTS.append("on_train_start")
            if reseed:
                torch.manual_seed(7)

        def on_train_epoch_start(self) -> None:
            EVENTS.append("on_train_epoch_start")
            if reseed:
                torch.rand(3)  # draws between the epoch's set_epoch and its batches

        def on_train_end(self) -> None:
            EVENTS.append("on_train_end")

    return Module()


def _saver(framework: Any, directory: Path) -> Any:
    class Saves(framework.Callback):  # type: ignore[misc, name-defined]
        """Writes ``end.ckpt`` at epoch 0's end and ``mid.ckpt`` after epoch 1's second batch."""

        def on_train_batch_end(self, trainer: Any, module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
            if trainer.current_epoch == 1 and batch_idx == 1:
                trainer.save_checkpoint(directory / "mid.ckpt")

        def on_train_epoch_end(self, trainer: Any, module: Any) -> None:
            if trainer.current_epoch == 0:
                trainer.save_checkpoint(directory / "end.ckpt")

    return Saves()


def _fit(framework: Any, root: Path, *, workers: int = 0, reseed: bool = False, ckpt: str | None = None) -> list[str]:
    """The events of a 3-epoch fit of 4 batches an epoch (resumed from ``root/ckpt`` when given)."""
    torch.manual_seed(0)
    loader = _RecordingLoader(
        TensorDataset(torch.arange(8.0).unsqueeze(1)), batch_size=2, sampler=_RecordingSampler(), num_workers=workers
    )
    trainer = framework.Trainer(
        accelerator="cpu", devices=1, max_epochs=3, logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False, default_root_dir=root,
        callbacks=[] if ckpt else [_saver(framework, root)],
    )  # fmt: skip
    EVENTS.clear()
    with quiet_lightning(framework), warnings.catch_warnings():
        # Lightning's notes on a 1-worker loader and on resuming inside an epoch with a loader that keeps no state
        warnings.filterwarnings("ignore", message=r"The 'train_dataloader' does not have many workers")
        warnings.filterwarnings("ignore", message=r"You're resuming from a checkpoint that ended before the epoch")
        trainer.fit(_module(framework, reseed=reseed), loader, ckpt_path=None if ckpt is None else root / ckpt)
    return list(EVENTS)


@pytest.mark.parametrize("reseed", [False, True], ids=["plain", "hooks-draw"])
def test_a_fresh_fit_makes_its_iterators_and_draws_its_order_where_lightning_does(reseed: bool, tmp_path: Path) -> None:
    seen = {name: _fit(fw, tmp_path / name, reseed=reseed) for name, fw in FRAMEWORKS.items()}
    assert seen["accelplug"] == seen["lightning"]
    assert seen["accelplug"][:4] == ["iter", "on_train_start", "set_epoch(0)", "on_train_epoch_start"]


@pytest.mark.parametrize("ckpt", ["end.ckpt", "mid.ckpt"])
def test_a_resumed_fit_makes_its_first_iterator_before_on_train_start_as_lightning_does(
    ckpt: str, tmp_path: Path
) -> None:
    seen = {}
    for name, fw in FRAMEWORKS.items():
        _fit(fw, tmp_path / name)
        seen[name] = _fit(fw, tmp_path / name, ckpt=ckpt)
    resumed_epoch = 1
    # accelplug also tells the sampler its epoch before that first iter(): a loader with workers draws its order
    # then, and Lightning's sampler would still be at epoch 0
    assert seen["accelplug"][0] == f"set_epoch({resumed_epoch})"
    events = [event for event in seen["accelplug"][1:] if not event.startswith("batch")]
    assert events == [event for event in seen["lightning"] if not event.startswith("batch")]
    assert events[:3] == ["iter", "on_train_start", f"set_epoch({resumed_epoch})"]


class _SeedReporting(Dataset[Any]):
    """Each sample carries the seed of the worker that loaded it: torch's, the base drawn at ``iter()`` plus its id."""

    def __len__(self) -> int:
        return 8

    def __getitem__(self, index: int) -> Any:
        return torch.tensor([float(index)]), torch.tensor(torch.initial_seed() % 2**31)


def test_the_workers_get_the_seeds_lightnings_get_when_the_hooks_draw(tmp_path: Path) -> None:
    seen = {}
    for name, fw in FRAMEWORKS.items():
        torch.manual_seed(0)
        loader = DataLoader(_SeedReporting(), batch_size=4, shuffle=True, num_workers=1)
        trainer = fw.Trainer(
            accelerator="cpu", devices=1, max_epochs=2, logger=False, enable_checkpointing=False,
            enable_progress_bar=False, enable_model_summary=False, default_root_dir=tmp_path / name,
        )  # fmt: skip
        EVENTS.clear()
        with quiet_lightning(fw), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"The 'train_dataloader' does not have many workers")
            trainer.fit(_module(fw, reseed=True), loader)
        seen[name] = list(EVENTS)
    assert seen["accelplug"] == seen["lightning"]


@pytest.mark.parametrize("workers", [0, 1], ids=["in-process", "worker"])
@pytest.mark.parametrize("ckpt", ["end.ckpt", "mid.ckpt"])
def test_a_resumed_fit_trains_on_the_batches_the_uninterrupted_fit_did(ckpt: str, workers: int, tmp_path: Path) -> None:
    batches = [event for event in _fit(FRAMEWORKS["accelplug"], tmp_path, workers=workers) if event.startswith("batch")]
    resumed = [event for event in _fit(FRAMEWORKS["accelplug"], tmp_path, workers=workers, ckpt=ckpt)]
    resumed = [event for event in resumed if event.startswith("batch")]
    done = 4 if ckpt == "end.ckpt" else 6  # batches trained before the checkpoint was written
    assert resumed == batches[done:]


def _step(batch: Any, batch_idx: int, dataloader_idx: int = 0) -> Any:
    """The evaluation steps (validation, test, predict) of the module whose hooks are compared."""
    EVENTS.append("step")
    return batch[0]


def _evaluation_recorder(framework: Any) -> Any:
    """A callback that writes down each evaluation hook (``on_validation_start``, ...) but the batch ones."""

    def recording(name: str) -> Any:
        return lambda *args: EVENTS.append(name)

    hooks = {
        f"on_{stage}_{when}": recording(f"on_{stage}_{when}")
        for stage in ("validation", "test", "predict")
        for when in ("start", "epoch_start", "epoch_end", "end")
    }
    return type("Records", (framework.Callback,), hooks)()


@pytest.mark.parametrize("call", ["validate", "test", "predict"])
def test_an_evaluation_makes_its_first_iterator_before_its_hooks_as_lightning_does(call: str, tmp_path: Path) -> None:
    seen = {}
    for name, fw in FRAMEWORKS.items():
        module = _module(fw)
        module.validation_step = module.test_step = module.predict_step = _step
        loaders = [
            _RecordingLoader(TensorDataset(torch.arange(8.0).unsqueeze(1)), batch_size=4, sampler=_RecordingSampler())
            for _ in range(2)
        ]
        trainer = fw.Trainer(
            accelerator="cpu", devices=1, logger=False, enable_progress_bar=False, enable_model_summary=False,
            default_root_dir=tmp_path / name, callbacks=[_evaluation_recorder(fw)],
        )  # fmt: skip
        EVENTS.clear()
        with quiet_lightning(fw):
            getattr(trainer, call)(module, loaders)
        seen[name] = list(EVENTS)
    assert seen["accelplug"] == seen["lightning"]
    assert seen["accelplug"][:3] == ["set_epoch(0)", "set_epoch(0)", "iter"]  # each loader's sampler, then the first
