"""``reload_dataloaders_every_n_epochs``: which epochs ask ``train_dataloader()`` and ``val_dataloader()`` again,
as Lightning 2.6.6 asks them.

Lightning asks ``val_dataloader()`` again at a validation inside fit when at least N epochs passed since it last
asked (a sanity check counts only when its epoch validates); the validation loaders are not made once per fit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import accelplug
from accelplug.errors import MisconfigurationException
from tests.callbacks.parity import quiet_lightning
from tests.trainer.loops.both import FRAMEWORKS, VAL_SAMPLES, Record, loader, recording_module


def _asked_epochs(framework: Any, tmp_path: Path, **options: Any) -> dict[str, list[int]]:
    """Fit a module whose loader methods write down the epoch (and whether a sanity check asked)."""
    asked: dict[str, list[int]] = {"train": [], "val": [], "sanity": []}
    model = recording_module(framework, Record())

    def train_dataloader() -> Any:
        asked["train"].append(model.current_epoch)
        return loader()

    def val_dataloader() -> Any:
        asked["sanity" if model.trainer.sanity_checking else "val"].append(model.current_epoch)
        return loader(VAL_SAMPLES, seed=1)

    type(model).train_dataloader = lambda self: train_dataloader()
    type(model).val_dataloader = lambda self: val_dataloader()
    trainer = framework.Trainer(
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_train_batches=1,
        limit_val_batches=1,
        default_root_dir=tmp_path,
        **options,
    )
    with quiet_lightning(framework):
        trainer.fit(model)
    return asked


@pytest.mark.parametrize(
    ("sanity", "every_n_epoch", "reload_every"),
    [
        pytest.param(0, 1, 1, id="every epoch, no sanity check"),
        pytest.param(1, 1, 1, id="every epoch, the sanity check's loaders serve epoch 0"),
        pytest.param(1, 1, 2, id="every second epoch"),
        pytest.param(0, 3, 4, id="validating less often than reloading"),
        pytest.param(1, 3, 4, id="a sanity check in an epoch that does not validate counts for nothing"),
        pytest.param(1, 2, 1, id="validating every second epoch, reloading each time"),
        pytest.param(0, 5, 2, id="reloads at the validations at least 2 epochs apart"),
    ],
)
def test_validation_loaders_are_asked_for_again_in_lightnings_epochs(
    tmp_path: Path, sanity: int, every_n_epoch: int, reload_every: int
) -> None:
    options = {
        "num_sanity_val_steps": sanity,
        "check_val_every_n_epoch": every_n_epoch,
        "reload_dataloaders_every_n_epochs": reload_every,
        "max_epochs": 10,
    }
    asked = {name: _asked_epochs(fw, tmp_path / name, **options) for name, fw in FRAMEWORKS.items()}
    assert len(asked["lightning"]["val"]) > 1, "the case must ask more than once"
    assert asked["accelplug"] == asked["lightning"]


def test_without_reloading_the_validation_loaders_are_asked_for_once(tmp_path: Path) -> None:
    asked = _asked_epochs(accelplug, tmp_path, num_sanity_val_steps=0, max_epochs=3)
    assert asked == {"train": [0], "val": [0], "sanity": []}


@pytest.mark.parametrize("value", ["test", -1])
def test_a_negative_or_non_int_reload_interval_is_refused_in_lightnings_words(value: Any) -> None:
    with pytest.raises(MisconfigurationException, match="should be an int >= 0"):
        accelplug.Trainer(reload_dataloaders_every_n_epochs=value)
