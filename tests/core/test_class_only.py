"""``load_from_checkpoint`` is a classmethod that refuses an instance, as Lightning's does: ``model.load_from_
checkpoint(path)`` would load nothing into ``model``."""

from __future__ import annotations

from pathlib import Path

import pytest

import accelplug
from accelplug.demos.boring_classes import BoringModel
from accelplug.errors import MisconfigurationException

lightning = pytest.importorskip("lightning")


@pytest.mark.parametrize("kind", ["module", "datamodule"])
def test_called_on_an_instance_it_is_refused_with_lightnings_type_and_words(kind: str, tmp_path: Path) -> None:
    from lightning.pytorch.demos.boring_classes import BoringModel as TheirBoringModel

    ours = BoringModel() if kind == "module" else accelplug.LightningDataModule()
    theirs = TheirBoringModel() if kind == "module" else lightning.LightningDataModule()
    with pytest.raises(TypeError) as their_error:
        theirs.load_from_checkpoint(tmp_path / "x.ckpt")
    with pytest.raises(TypeError) as our_error:
        ours.load_from_checkpoint(tmp_path / "x.ckpt")  # before the file is looked for, as Lightning
    assert isinstance(our_error.value, MisconfigurationException)
    assert str(our_error.value).startswith(str(their_error.value).split(" used")[0])


def test_on_the_class_it_still_loads(tmp_path: Path) -> None:
    trainer = accelplug.Trainer(
        max_steps=1, logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False
    )
    model = BoringModel()
    trainer.fit(model)
    trainer.save_checkpoint(tmp_path / "m.ckpt")
    loaded = BoringModel.load_from_checkpoint(tmp_path / "m.ckpt")
    assert type(loaded) is BoringModel
    assert type(model).load_from_checkpoint(tmp_path / "m.ckpt").layer.weight.equal(loaded.layer.weight)
