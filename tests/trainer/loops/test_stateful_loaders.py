"""Training iterables that keep their own position (``state_dict``/``load_state_dict``, as torchdata's
``StatefulDataLoader``): a checkpoint keeps where they stand, in Lightning's place, and a resumed fit goes on from
there, seeing exactly the batches the uninterrupted fit saw next."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

import accelplug
from accelplug.demos.boring_classes import BoringModel
from accelplug.errors import PossibleUserWarning
from accelplug.pytorch.utilities import CombinedLoader

pytestmark = pytest.mark.filterwarnings("ignore:Be aware that when using `ckpt_path`, callbacks used to create")


class ShuffledStream:
    """A user's stateful iterable: each pass draws its order from its own generator and counts what it gave."""

    def __init__(self, size: int = 10, seed: int = 7) -> None:
        self.size, self.seed, self.passes, self.given = size, seed, 0, 0

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[torch.Tensor]:
        if self.given == self.size:  # the last pass ended: a new one
            self.passes, self.given = self.passes + 1, 0
        order = torch.randperm(self.size, generator=torch.Generator().manual_seed(self.seed + self.passes)).tolist()
        while self.given < self.size:
            self.given += 1
            yield torch.full((1, 32), float(order[self.given - 1]))

    def state_dict(self) -> dict[str, int]:
        return {"passes": self.passes, "given": self.given}

    def load_state_dict(self, state: dict[str, int]) -> None:
        self.passes, self.given = state["passes"], state["given"]


class Recording(BoringModel):
    def __init__(self, data: Any) -> None:
        super().__init__()
        self.data, self.seen = data, list[int]()

    def training_step(self, batch: Any, batch_idx: int) -> Any:
        batch = batch[0] if isinstance(batch, list) else batch  # a CombinedLoader's: the first loader's
        self.seen.append(int(batch[0, 0]))
        return super().training_step(batch, batch_idx)

    def train_dataloader(self) -> Any:
        return self.data

    def val_dataloader(self) -> Any:
        return None


def _fit(tmp_path: Path, data: Any, max_steps: int, ckpt_path: Path | None = None) -> tuple[Recording, Any]:
    trainer = accelplug.Trainer(
        default_root_dir=tmp_path, max_steps=max_steps, limit_val_batches=0, logger=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
    )  # fmt: skip
    model = Recording(data)
    trainer.fit(model, ckpt_path=ckpt_path)
    return model, trainer


def test_a_resumed_fit_continues_a_stateful_loader_from_where_the_checkpoint_left_it(tmp_path: Path) -> None:
    whole, _ = _fit(tmp_path, ShuffledStream(), max_steps=15)  # into the second pass
    first, trainer = _fit(tmp_path, ShuffledStream(), max_steps=4)
    trainer.save_checkpoint(tmp_path / "mid.ckpt")
    resumed, _ = _fit(tmp_path, ShuffledStream(), max_steps=15, ckpt_path=tmp_path / "mid.ckpt")
    assert first.seen == whole.seen[:4]
    assert resumed.seen == whole.seen[4:]


def test_the_checkpoint_keeps_each_stateful_loaders_state_where_lightning_keeps_it(tmp_path: Path) -> None:
    data = CombinedLoader([ShuffledStream(seed=1), [torch.zeros(1, 32)] * 10, ShuffledStream(seed=2)])
    _, trainer = _fit(tmp_path, data, max_steps=3)
    trainer.save_checkpoint(tmp_path / "mid.ckpt")
    checkpoint = torch.load(tmp_path / "mid.ckpt", weights_only=True)
    expected = [{"passes": 0, "given": 3}, {"passes": 0, "given": 3}]
    assert checkpoint["loops"]["fit_loop"]["state_dict"]["combined_loader"] == expected


def test_a_loader_without_state_leaves_no_loader_state_in_the_checkpoint(tmp_path: Path) -> None:
    _, trainer = _fit(tmp_path, [torch.zeros(1, 32)] * 10, max_steps=3)
    trainer.save_checkpoint(tmp_path / "mid.ckpt")
    checkpoint = torch.load(tmp_path / "mid.ckpt", weights_only=True)
    assert "combined_loader" not in checkpoint["loops"]["fit_loop"]["state_dict"]


def test_resuming_with_another_number_of_stateful_loaders_is_refused_as_lightning_refuses_it(tmp_path: Path) -> None:
    _, trainer = _fit(tmp_path, ShuffledStream(), max_steps=3)
    trainer.save_checkpoint(tmp_path / "mid.ckpt")
    two = CombinedLoader([ShuffledStream(), ShuffledStream()])
    with pytest.raises(RuntimeError, match="holds 2 stateful loaders, but found 1 states in the checkpoint"):
        _fit(tmp_path, two, max_steps=6, ckpt_path=tmp_path / "mid.ckpt")


def test_a_mid_epoch_resume_of_a_loader_without_state_warns_as_lightning(tmp_path: Path) -> None:
    data = [torch.zeros(1, 32)] * 10
    _, trainer = _fit(tmp_path, data, max_steps=3)
    trainer.save_checkpoint(tmp_path / "mid.ckpt")
    with pytest.warns(PossibleUserWarning, match="resuming from a checkpoint that ended before the epoch ended"):
        _fit(tmp_path, data, max_steps=6, ckpt_path=tmp_path / "mid.ckpt")


def test_a_mid_epoch_resume_of_a_stateful_loader_does_not_warn(tmp_path: Path) -> None:
    _, trainer = _fit(tmp_path, ShuffledStream(), max_steps=3)
    trainer.save_checkpoint(tmp_path / "mid.ckpt")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _fit(tmp_path, ShuffledStream(), max_steps=6, ckpt_path=tmp_path / "mid.ckpt")
    assert not [w for w in caught if "resuming from a checkpoint that ended" in str(w.message)]
