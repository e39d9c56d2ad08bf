"""A Trainer call made without a model runs the module the Trainer already has, as in Lightning 2.6.6: the last
call's, or the one connected to it (by hand with ``trainer.strategy.connect``, or by a ``ddp_spawn`` fit, whose
run happened in other processes); with none, the call is refused with Lightning's phrase."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.callbacks.parity import FRAMEWORKS, make_module, quiet_lightning

pytest.importorskip("lightning", reason="the parity tests compare with Lightning, not installed here")


def _trainer(framework: Any, root: Path) -> Any:
    return framework.Trainer(
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=root,
    )


def test_validate_without_a_model_runs_the_module_connected_to_the_trainer(tmp_path: Path) -> None:
    results = {}
    for name, framework in FRAMEWORKS.items():
        trainer = _trainer(framework, tmp_path / name)
        trainer.strategy.connect(make_module(framework))
        saved = trainer.save_checkpoint(tmp_path / name / "connected.ckpt")
        with quiet_lightning(framework):
            results[name] = trainer.validate(ckpt_path=saved or tmp_path / name / "connected.ckpt", verbose=False)
    assert results["accelplug"][0].keys() == results["lightning"][0].keys() == {"val_loss"}
    assert results["accelplug"][0]["val_loss"] == pytest.approx(results["lightning"][0]["val_loss"])


def test_a_call_without_a_model_on_a_trainer_that_has_none_is_refused(tmp_path: Path) -> None:
    phrase = "requires a `LightningModule` when it hasn't been passed in a previous run"  # Lightning's TypeError
    for name, framework in FRAMEWORKS.items():
        trainer = _trainer(framework, tmp_path / name)
        with pytest.raises(TypeError, match=phrase):
            trainer.test()
