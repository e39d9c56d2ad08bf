"""``ModelCheckpoint``: periodic and best-so-far checkpoints with Lightning's arguments."""

from __future__ import annotations

from pathlib import Path

import torch

from accelplug import Trainer
from accelplug.callbacks import ModelCheckpoint
from tests.modules import LinearRegression, quiet, regression_data


def test_model_checkpoint_writes_periodic_files_and_last(tmp_path: Path) -> None:
    callback = ModelCheckpoint(tmp_path / "ckpts", every_n_train_steps=3, every_n_epochs=None, keep=2)
    trainer = Trainer(**quiet(max_steps=10, callbacks=[callback], default_root_dir=tmp_path))
    trainer.fit(LinearRegression(), regression_data())
    assert sorted(p.name for p in (tmp_path / "ckpts").iterdir()) == ["last.ckpt", "step=6.ckpt", "step=9.ckpt"]
    assert callback.last_model_path == (tmp_path / "ckpts" / "last.ckpt").resolve()
    assert torch.load(callback.last_model_path, weights_only=True)["loop"]["global_step"] == 10
