"""``trainer.datamodule`` is settable, as Lightning's attribute is: ``lightning_getattr``/``lightning_setattr`` (and
the tuners built on them) then find a value a module lacks in the datamodule the user attached."""

from __future__ import annotations

import pytest

import accelplug
from accelplug.pytorch.utilities.parsing import lightning_getattr, lightning_hasattr, lightning_setattr

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")


def test_a_datamodule_set_on_the_trainer_is_where_a_module_attribute_is_looked_up() -> None:
    trainer = accelplug.Trainer(logger=False, enable_checkpointing=False, enable_progress_bar=False)
    datamodule = accelplug.LightningDataModule()
    datamodule.batch_size = 8  # type: ignore[attr-defined]
    trainer.datamodule = datamodule
    assert trainer.datamodule is datamodule
    module = accelplug.LightningModule()
    module.trainer = trainer
    assert lightning_hasattr(module, "batch_size") and lightning_getattr(module, "batch_size") == 8
    lightning_setattr(module, "batch_size", 16)
    assert datamodule.batch_size == 16  # type: ignore[attr-defined]


def test_lightning_lets_the_datamodule_be_set_too() -> None:
    trainer = lightning.Trainer(logger=False, enable_checkpointing=False, enable_progress_bar=False)
    datamodule = lightning.LightningDataModule()
    trainer.datamodule = datamodule
    assert trainer.datamodule is datamodule
