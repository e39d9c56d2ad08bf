"""accelplug's checkpoints against Lightning 2.6's: the same ``epoch``, ``global_step`` and loop counters at each
save point, Lightning loading and resuming a file accelplug wrote to the weights its own resume reaches, and
accelplug resuming a file Lightning wrote as Lightning does."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
import torch

import accelplug
from accelplug.trainer.checkpointing.lightning_loops import loop_from_lightning
from tests.callbacks.parity import fit_both, lightning, make_module, quiet_lightning


def _checkpoint_callback(framework: Any) -> Any:
    return (framework.pytorch.callbacks if hasattr(framework, "pytorch") else framework.callbacks).ModelCheckpoint


def _saved(side: Any) -> dict[str, dict[str, Any]]:
    return {
        name: torch.load(side.root / "ckpts" / name, weights_only=False)
        for name in sorted(p.name for p in (side.root / "ckpts").iterdir())
    }


@pytest.mark.parametrize("validation", [True, False], ids=["saved-on-validation-end", "saved-on-train-epoch-end"])
def test_checkpoints_hold_lightnings_epoch_step_and_loop_counters(validation: bool, tmp_path: Path) -> None:
    sides = fit_both(
        tmp_path,
        lambda f: [_checkpoint_callback(f)(dirpath=f"{tmp_path}/{f.__name__}/ckpts", save_top_k=-1)],
        module={"validation": validation, "scheduler": True},  # a step-interval scheduler: scheduler_progress
    )
    for side in sides.values():
        side.trainer.save_checkpoint(side.root / "ckpts" / "after-fit.ckpt")
    ours, theirs = _saved(sides["accelplug"]), _saved(sides["lightning"])
    assert list(ours) == list(theirs) == ["after-fit.ckpt", "epoch=0-step=6.ckpt", "epoch=1-step=12.ckpt"]
    for name, wanted in theirs.items():
        mine = ours[name]
        assert (mine["epoch"], mine["global_step"]) == (wanted["epoch"], wanted["global_step"]), name
        assert mine["pytorch-lightning_version"] == wanted["pytorch-lightning_version"]
        fit_loop, expected = mine["loops"]["fit_loop"], wanted["loops"]["fit_loop"]
        for key in (
            "epoch_progress",
            "epoch_loop.state_dict",
            "epoch_loop.batch_progress",
            "epoch_loop.scheduler_progress",
            "epoch_loop.automatic_optimization.optim_progress",
            "epoch_loop.manual_optimization.optim_step_progress",
        ):
            assert fit_loop[key] == expected[key], (name, key)


def _resume(framework: Any, root: Path, ckpt: Path) -> Any:
    torch.manual_seed(1)
    model = make_module(framework)
    trainer = framework.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=3,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        default_root_dir=root,
    )
    with warnings.catch_warnings():
        # Lightning's advice on these tiny loaders (num_workers, few batches): not this test's subject
        warnings.filterwarnings("ignore", message=".*(does not have many workers|log_every_n_steps).*")
        # and on resuming without the ModelCheckpoint whose state the file holds: left out on purpose here
        warnings.filterwarnings("ignore", message="Be aware that when using `ckpt_path`, callbacks used to create")
        trainer.fit(model, ckpt_path=ckpt)
    return trainer, model


@pytest.mark.parametrize("saved", ["epoch=0-step=6.ckpt", "after-fit.ckpt"])
def test_lightning_loads_and_resumes_a_checkpoint_accelplug_wrote(saved: str, tmp_path: Path) -> None:
    sides = fit_both(
        tmp_path, lambda f: [_checkpoint_callback(f)(dirpath=f"{tmp_path}/{f.__name__}/ckpts", save_top_k=-1)]
    )
    sides["accelplug"].trainer.save_checkpoint(sides["accelplug"].root / "ckpts" / "after-fit.ckpt")
    ckpt = sides["accelplug"].root / "ckpts" / saved
    loaded = type(make_module(lightning)).load_from_checkpoint(ckpt)
    torch.testing.assert_close(loaded.state_dict(), torch.load(ckpt, weights_only=False)["state_dict"])
    theirs, their_model = _resume(lightning, tmp_path / "lightning-resume", ckpt)
    ours, our_model = _resume(accelplug, tmp_path / "accelplug-resume", ckpt)
    assert (theirs.global_step, theirs.current_epoch) == (ours.global_step, ours.current_epoch) == (18, 3)
    torch.testing.assert_close(their_model.state_dict(), our_model.state_dict())


@pytest.mark.parametrize("saved", ["epoch=0-step=6.ckpt", "after-fit.ckpt"])
def test_accelplug_resumes_a_checkpoint_lightning_wrote_where_lightnings_own_resume_goes(
    saved: str, tmp_path: Path
) -> None:
    sides = fit_both(
        tmp_path, lambda f: [_checkpoint_callback(f)(dirpath=f"{tmp_path}/{f.__name__}/ckpts", save_top_k=-1)]
    )
    with quiet_lightning():
        sides["lightning"].trainer.save_checkpoint(sides["lightning"].root / "ckpts" / "after-fit.ckpt")
    ckpt = sides["lightning"].root / "ckpts" / saved
    assert "accelplug_checkpoint" not in torch.load(ckpt, weights_only=True)  # Lightning's file, as it wrote it
    theirs, their_model = _resume(lightning, tmp_path / "lightning-resume", ckpt)
    ours, our_model = _resume(accelplug, tmp_path / "accelplug-resume", ckpt)
    assert (ours.global_step, ours.current_epoch) == (theirs.global_step, theirs.current_epoch) == (18, 3)
    torch.testing.assert_close(our_model.state_dict(), their_model.state_dict())


def test_lightnings_loop_counters_read_back_into_the_loop_record_accelplug_keeps_beside_them(tmp_path: Path) -> None:
    """accelplug writes Lightning's counters and its own record side by side at each save point (validation end,
    train epoch end, after the fit): reading the counters back gives the record, field for field."""
    checkpoints = accelplug.ModelCheckpoint
    trainer = accelplug.Trainer(
        accelerator="cpu",
        max_epochs=2,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        default_root_dir=tmp_path,
        callbacks=[
            checkpoints(dirpath=tmp_path / "on-validation-end", save_top_k=-1),
            # mode only tells the two state keys apart (nothing is monitored)
            checkpoints(dirpath=tmp_path / "at-epoch-end", save_top_k=-1, save_on_train_epoch_end=True, mode="max"),
            checkpoints(dirpath=tmp_path / "by-step", save_top_k=-1, every_n_train_steps=4),
        ],
    )
    trainer.fit(make_module(accelplug, scheduler=True))
    trainer.save_checkpoint(tmp_path / "after-fit" / "last.ckpt")
    files = sorted(tmp_path.glob("*/*.ckpt"))
    assert len(files) > 6
    for file in files:
        checkpoint = torch.load(file, weights_only=True)
        derived = loop_from_lightning(checkpoint)
        kept = {key: checkpoint["loop"][key] for key in derived}
        assert derived == kept, file.relative_to(tmp_path)
