"""Resuming a fit from a checkpoint: mid-epoch, at an epoch's end, and ``ckpt_path="last"``.

Which batches a resumed fit runs, when it validates and where its counters end are Lightning 2.6.6's (compared
on the same checkpoints of each framework's own first run). What the batches hold is accelplug's own promise
(``trainer/loops/_resume.py``): a resumed fit sees the same shuffled batches as the uninterrupted one and ends
with the same weights, which Lightning's plain ``DataLoader`` does not give mid-epoch.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader

import accelplug
from tests.trainer.loops.both import FRAMEWORKS, Record, fit_one, loader

# These resumes leave the checkpoint's ModelCheckpoint out on purpose (the weights and loop are what they compare):
# Lightning's advice to pass it again is given by both frameworks and is not what the tests are about.
# A mid-epoch resume of a plain DataLoader gets Lightning's advice to make the loader resumable (both frameworks).
pytestmark = [
    pytest.mark.filterwarnings("ignore:Be aware that when using `ckpt_path`, callbacks used to create"),
    pytest.mark.filterwarnings("ignore:You're resuming from a checkpoint that ended before the epoch ended"),
]


def _shuffled() -> DataLoader[Any]:
    return loader(shuffle=True)  # drawn from torch's global generator, which a checkpoint records


def _checkpoints(folder: Path, **options: Any) -> Callable[[Any], list[Any]]:
    return lambda framework: [framework.pytorch.callbacks.ModelCheckpoint(dirpath=folder, **options)]


def _first_then_resumed(
    framework: Any, tmp_path: Path, checkpoint: str, *, every_n_train_steps: int | None = None, **options: Any
) -> tuple[Record, Record]:
    """An uninterrupted 2-epoch fit that saves checkpoints, then a fresh fit resumed from one of them."""
    folder = tmp_path / "checkpoints"
    saving = _checkpoints(folder, every_n_train_steps=every_n_train_steps, save_top_k=-1)
    first, _ = fit_one(
        framework, tmp_path / "first", callbacks=saving, enable_checkpointing=True, max_epochs=2, **options
    )
    torch.manual_seed(1234)  # whatever the global generator holds now, the checkpoint's state must win
    resumed, _ = fit_one(framework, tmp_path / "resumed", max_epochs=2, ckpt_path=folder / checkpoint, **options)
    return first, resumed


@pytest.mark.parametrize(
    ("checkpoint", "every_n_train_steps"),
    [
        pytest.param("epoch=0-step=3.ckpt", 3, id="mid-epoch"),
        pytest.param("epoch=1-step=9.ckpt", 3, id="one batch into the second epoch"),
        pytest.param("epoch=0-step=8.ckpt", None, id="at the end of an epoch"),
    ],
)
def test_a_resumed_fit_runs_the_rest_of_the_fit_as_lightning(
    tmp_path: Path, checkpoint: str, every_n_train_steps: int | None
) -> None:
    resumed = {
        name: _first_then_resumed(framework, tmp_path / name, checkpoint, every_n_train_steps=every_n_train_steps)[1]
        for name, framework in FRAMEWORKS.items()
    }
    assert resumed["accelplug"].story == resumed["lightning"].story


@pytest.mark.parametrize(
    ("checkpoint", "every_n_train_steps", "done"),
    [
        pytest.param("epoch=0-step=3.ckpt", 3, 3, id="mid-epoch"),
        pytest.param("epoch=0-step=8.ckpt", None, 8, id="at the end of an epoch"),
    ],
)
def test_a_resumed_fit_sees_the_same_shuffled_batches_and_ends_with_the_same_weights(
    tmp_path: Path, checkpoint: str, every_n_train_steps: int | None, done: int
) -> None:
    first, resumed = _first_then_resumed(
        accelplug, tmp_path, checkpoint, every_n_train_steps=every_n_train_steps, train=_shuffled
    )
    assert resumed.batches == first.batches[done:]
    for ours, uninterrupted in zip(resumed.weights, first.weights, strict=True):
        torch.testing.assert_close(ours, uninterrupted)


def test_resuming_a_finished_fit_trains_nothing_as_lightning(tmp_path: Path) -> None:
    resumed = {
        name: _first_then_resumed(framework, tmp_path / name, "epoch=1-step=16.ckpt")[1]
        for name, framework in FRAMEWORKS.items()
    }
    assert resumed["accelplug"].batches == []
    assert resumed["accelplug"].story == resumed["lightning"].story


def test_ckpt_path_last_resumes_from_the_checkpoint_callbacks_last_file_as_lightning(tmp_path: Path) -> None:
    records = {}
    for name, framework in FRAMEWORKS.items():
        saving = _checkpoints(tmp_path / name / "checkpoints", save_last=True)
        fit_one(framework, tmp_path / name, callbacks=saving, enable_checkpointing=True, max_epochs=1)
        with pytest.warns(UserWarning, match="exists and is not empty"):  # both say so: the first fit's files
            records[name], _ = fit_one(
                framework, tmp_path / name, callbacks=saving, enable_checkpointing=True, max_epochs=2, ckpt_path="last"
            )
    assert records["accelplug"].batches[0] == ("train", 1, 0, 8)
    assert records["accelplug"].story == records["lightning"].story
