"""The callbacks a module returns from ``configure_callbacks()`` join ``trainer.callbacks`` as in Lightning 2.6.6:
they replace the Trainer's callbacks of their class (or of a class they derive from), checkpointing callbacks stay
last, and the Trainer keeps the merged list after the call, so ``trainer.checkpoint_callback`` is the one that ran.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from tests.callbacks.parity import make_module, quiet_lightning
from tests.trainer.loops.both import FRAMEWORKS

pytestmark = pytest.mark.filterwarnings(
    # Lightning's advice about worker processes for the tiny in-memory loaders these tests use
    "ignore:The '.*dataloader' does not have many workers:UserWarning",
)


def _module(framework: Any, make_callbacks: Any) -> Any:
    """The parity regression whose ``configure_callbacks()`` returns ``make_callbacks(framework)`` (both frameworks
    look the hook up on the instance)."""
    module = make_module(framework)
    module.configure_callbacks = lambda: make_callbacks(framework)
    return module


def _fit_both(tmp_path: Path, make_callbacks: Any, **options: Any) -> dict[str, Any]:
    trainers = {}
    for name, framework in FRAMEWORKS.items():
        settings: dict[str, Any] = {
            "accelerator": "cpu",
            "max_epochs": 1,
            "logger": False,
            "enable_progress_bar": False,
            "num_sanity_val_steps": 0,
            "log_every_n_steps": 1,
            "default_root_dir": tmp_path / name,
            **options,
        }
        trainer = framework.Trainer(**settings)
        with quiet_lightning(framework):
            trainer.fit(_module(framework, make_callbacks))
        trainers[name] = trainer
    return trainers


def _kinds(trainer: Any) -> list[str]:
    return [type(c).__name__ for c in trainer.callbacks]


def test_a_modules_model_checkpoint_replaces_the_default_one_and_is_the_trainers_checkpoint_callback(
    tmp_path: Path,
) -> None:
    def callbacks(framework: Any) -> list[Any]:
        return [framework.pytorch.callbacks.ModelCheckpoint(filename="mine-{epoch}", monitor="val_loss")]

    trainers = _fit_both(tmp_path, callbacks)
    ours, theirs = trainers["accelplug"], trainers["lightning"]
    assert _kinds(ours) == _kinds(theirs)
    assert Path(ours.checkpoint_callback.best_model_path).name == "mine-epoch=0.ckpt"
    assert Path(theirs.checkpoint_callback.best_model_path).name == "mine-epoch=0.ckpt"


def test_checkpointing_callbacks_stay_last_after_a_modules_callbacks_join(tmp_path: Path) -> None:
    def callbacks(framework: Any) -> list[Any]:
        return [framework.pytorch.callbacks.LearningRateMonitor()]

    trainers = _fit_both(tmp_path, callbacks, logger=None)
    assert _kinds(trainers["accelplug"])[-1] == "ModelCheckpoint"
    assert _kinds(trainers["accelplug"]) == _kinds(trainers["lightning"])


def test_a_second_call_keeps_the_merged_list(tmp_path: Path) -> None:
    from accelplug.callbacks import EarlyStopping

    early = EarlyStopping(monitor="val_loss")
    trainer = FRAMEWORKS["accelplug"].Trainer(
        accelerator="cpu", max_epochs=1, logger=False, enable_progress_bar=False, default_root_dir=tmp_path
    )
    module = _module(FRAMEWORKS["accelplug"], lambda framework: early)
    trainer.fit(module)
    after_fit = list(trainer.callbacks)
    assert early in after_fit
    trainer.validate(module, verbose=False)
    assert trainer.callbacks == after_fit


def test_a_replacement_is_announced_with_the_classes_it_replaces(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from accelplug.callbacks import ModelCheckpoint

    trainer = FRAMEWORKS["accelplug"].Trainer(
        accelerator="cpu", max_epochs=1, logger=False, enable_progress_bar=False, default_root_dir=tmp_path
    )
    with caplog.at_level(logging.INFO, logger="accelplug"):
        trainer.fit(_module(FRAMEWORKS["accelplug"], lambda framework: [ModelCheckpoint()]))
    # Lightning's INFO line (its rank_zero_info logs it), word for word
    expected = (
        "The following callbacks returned in `LightningModule.configure_callbacks` will override existing "
        "callbacks passed to Trainer: ModelCheckpoint"
    )
    assert expected in [record.getMessage() for record in caplog.records]
