"""``ModelCheckpoint``: periodic and best-so-far checkpoints with Lightning's arguments (what parity cannot show)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug import Trainer
from accelplug.callbacks import ModelCheckpoint
from accelplug.errors import MisconfigurationException
from tests.modules import LinearRegression, quiet, regression_data

# These fits use loaders of a few batches: the advice that an epoch is shorter than the logging interval
# (Lightning's, given by both frameworks) is not what the tests are about.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:The number of training batches \(\d+\) is smaller than the logging interval"
)


def test_model_checkpoint_writes_periodic_files_and_last(tmp_path: Path) -> None:
    callback = ModelCheckpoint(tmp_path / "ckpts", every_n_train_steps=3, save_top_k=-1, save_last=True)
    trainer = Trainer(**quiet(max_steps=10, callbacks=[callback], default_root_dir=tmp_path))
    trainer.fit(LinearRegression(), regression_data())
    assert sorted(p.name for p in (tmp_path / "ckpts").iterdir()) == [
        "epoch=0-step=3.ckpt",
        "epoch=0-step=6.ckpt",
        "epoch=1-step=9.ckpt",
        "last.ckpt",
    ]
    assert callback.last_model_path == str((tmp_path / "ckpts" / "last.ckpt").resolve())
    # last.ckpt is written with each save, not at the end (Lightning's rule): it holds step 9, not 10
    assert torch.load(callback.last_model_path, weights_only=True)["loop"]["global_step"] == 9


def test_last_model_path_is_empty_before_a_save() -> None:
    callback = ModelCheckpoint()
    assert (callback.last_model_path, callback.best_model_path, callback.best_model_score) == ("", "", None)
    assert callback.save_last is None


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"mode": "mni"}, "`mode` can be min, max but got mni.* Did you mean 'min'"),
        ({"save_top_k": -2}, "save_top_k=-2. Must be >= -1"),
        ({"save_top_k": 3}, r"ModelCheckpoint\(save_top_k=3, monitor=None\) is not a valid configuration"),
        ({"every_n_train_steps": -1}, "every_n_train_steps=-1. Must be >= 0"),
        ({"every_n_epochs": 2, "every_n_train_steps": 3}, "Combination of parameters every_n_train_steps.*pick one"),
        ({"save_last": "lnk"}, "save_last='lnk'"),
        ({"train_time_interval": 5}, "timedelta"),
    ],
)
def test_bad_arguments_are_refused_with_their_value(arguments: dict[str, Any], words: str) -> None:
    """The value, what is accepted, and Lightning's key phrase (its tests match on those words)."""
    with pytest.raises(MisconfigurationException, match=words):
        ModelCheckpoint(**arguments)


def test_each_save_is_announced_to_the_loggers_on_rank_zero(tmp_path: Path) -> None:
    announced: list[tuple[str, str]] = []

    class Recorder:
        def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
            pass

        def after_save_checkpoint(self, checkpoint_callback: Any) -> None:
            announced.append(
                (Path(checkpoint_callback.best_model_path).name, Path(checkpoint_callback.last_model_path).name)
            )

    callback = ModelCheckpoint(tmp_path / "ckpts", every_n_train_steps=4, save_last=True)
    trainer = Trainer(**quiet(max_steps=8, callbacks=[callback], logger=[Recorder()], default_root_dir=tmp_path))
    trainer.fit(LinearRegression(), regression_data())
    assert announced == [
        ("epoch=0-step=4.ckpt", ""),
        ("epoch=0-step=4.ckpt", "last.ckpt"),
        ("epoch=0-step=8.ckpt", "last.ckpt"),
        ("epoch=0-step=8.ckpt", "last.ckpt"),
    ]
