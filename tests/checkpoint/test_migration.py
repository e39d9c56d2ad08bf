"""Upgrading old checkpoints: accelplug's ``migrate_checkpoint`` against Lightning 2.6's, fed the same dictionaries.

Each old layout is built as a plain dictionary the way the Lightning release it names wrote its files (read from
the migrations' own record of what changed), twice, and one copy goes to each framework; the upgraded dictionaries
and the record of steps applied must match. The callback classes Lightning uses as keys are compared by name
(accelplug's keys are its own classes, the ones its callbacks' ``type(callback)`` finds).
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch

from accelplug.callbacks import EarlyStopping, ModelCheckpoint
from accelplug.errors import PossibleUserWarning
from accelplug.pytorch.utilities.migration import migrate_checkpoint

lightning_migration = pytest.importorskip(
    "lightning.pytorch.utilities.migration", reason="compares with Lightning's migrate_checkpoint"
)


def _counts(*names: str, value: int = 0) -> dict[str, dict[str, int]]:
    return {part: dict.fromkeys(names, value) for part in ("current", "total")}


def _fit_loop_1_6(steps: int, epoch: int, batch_loop_state: dict[str, Any] | None = None) -> dict[str, Any]:
    """A fit loop as Lightning 1.6 to 1.9 saved it: a batch loop holding the optimizer and manual loops."""
    return {
        "state_dict": {},
        "epoch_progress": _counts("ready", "started", "processed", "completed", value=epoch),
        "epoch_loop.state_dict": {},
        "epoch_loop.batch_progress": {**_counts("ready", "started", "processed", "completed"), "is_last_batch": False},
        "epoch_loop.scheduler_progress": _counts("ready", "completed"),
        "epoch_loop.batch_loop.state_dict": batch_loop_state or {},
        "epoch_loop.batch_loop.optimizer_loop.state_dict": {},
        "epoch_loop.batch_loop.optimizer_loop.optim_progress": {
            "optimizer": {"step": _counts("ready", "completed", value=steps), "zero_grad": _counts("ready")},
            "optimizer_position": 1,
        },
        "epoch_loop.batch_loop.manual_loop.state_dict": {},
        "epoch_loop.batch_loop.manual_loop.optim_step_progress": _counts("ready", "completed"),
        "epoch_loop.val_loop.state_dict": {},
        "epoch_loop.val_loop.dataloader_progress": _counts("ready", "completed"),
    }


def _evaluation_loop_1_9() -> dict[str, Any]:
    """An evaluation loop before 2.0: a dataloader loop around an epoch loop."""
    return {
        "state_dict": {},
        "dataloader_progress": _counts("ready", "completed", value=1),
        "epoch_loop.state_dict": {"kept": True},
        "epoch_loop.batch_progress": _counts("ready", "started", "processed", "completed", value=4),
    }


_MC_KEY = "ModelCheckpoint{'monitor': 'val_loss', 'mode': 'min', 'every_n_train_steps': 0, 'every_n_epochs': 1, "
_MC_STATE = {"best_model_score": torch.tensor(0.25), "best_model_path": "epoch=2.ckpt"}


def _with_weights(version: str, **keys: Any) -> dict[str, Any]:
    return {"pytorch-lightning_version": version, "state_dict": {"layer.weight": torch.ones(2, 2)}, **keys}


#: Old layouts by the release that wrote them, each as a builder (every call a fresh dictionary).
OLD_LAYOUTS: dict[str, Callable[[], dict[str, Any]]] = {
    "0.9.0-callback-keys-at-the-top": lambda: _with_weights(
        "0.9.0",
        epoch=3,
        global_step=30,
        checkpoint_callback_best_model_score=0.25,
        checkpoint_callback_best_model_path="best.ckpt",
        early_stop_callback_wait=2,
        early_stop_callback_patience=5,
    ),
    "0.8.5-checkpoint-callback-best": lambda: _with_weights(
        "0.8.5", epoch=1, global_step=10, checkpoint_callback_best=0.5, callbacks=None
    ),
    "1.5.10-no-loops": lambda: _with_weights(
        "1.5.10",
        epoch=4,
        global_step=40,
        callbacks={_MC_KEY + "'train_time_interval': None, 'save_on_train_epoch_end': True}": _MC_STATE},
        amp_scaling_state={"scale": 1.0},
    ),
    "1.6.0-loops-without-batches-that-stepped": lambda: _with_weights(
        "1.6.0",
        epoch=2,
        global_step=20,
        loops={"fit_loop": _fit_loop_1_6(20, 2, {"custom": 1})},
    ),
    "1.8.6-two-model-checkpoints-that-collide": lambda: _with_weights(
        "1.8.6",
        epoch=1,
        global_step=8,
        loops={"fit_loop": {**_fit_loop_1_6(8, 1), "epoch_loop.state_dict": {"_batches_that_stepped": 8}}},
        callbacks={
            _MC_KEY + "'train_time_interval': None, 'save_on_train_epoch_end': True}": _MC_STATE,
            _MC_KEY + "'train_time_interval': None, 'save_on_train_epoch_end': False}": {"best_model_path": ""},
        },
    ),
    "1.9.5-evaluation-loops-and-apex": lambda: _with_weights(
        "1.9.5",
        epoch=5,
        global_step=50,
        amp_scaling_state={"loss_scaler0": {"loss_scale": 65536.0}},
        loops={
            "fit_loop": {
                **_fit_loop_1_6(50, 5),
                "epoch_loop.state_dict": {"_batches_that_stepped": 50},
                "epoch_loop.optimizer_loop.state_dict": {},
            },
            "validate_loop": _evaluation_loop_1_9(),
            "test_loop": _evaluation_loop_1_9(),
            "predict_loop": _evaluation_loop_1_9(),
        },
        callbacks={"EarlyStopping{'monitor': 'val_loss', 'mode': 'min'}": {"wait_count": 1, "patience": 3}},
    ),
    "2.0.0-current-layout": lambda: _with_weights("2.0.0", epoch=1, global_step=3, loops={}),
    "2.6.6-this-release": lambda: _with_weights("2.6.6", epoch=1, global_step=3),
    "2.0.0rc1-a-pre-release": lambda: _with_weights(
        "2.0.0rc1", epoch=0, global_step=0, loops={"fit_loop": _fit_loop_1_6(0, 0)}
    ),
    "9.1.0-a-newer-release": lambda: _with_weights("9.1.0", epoch=1, global_step=3, future={"kept": True}),
}


def _plain(value: Any) -> Any:
    """``value`` with every class used as a dictionary key replaced by the class's name and every tensor by its
    values, recursively: what ``==`` compares."""
    if isinstance(value, dict):
        return {(k.__name__ if isinstance(k, type) else k): _plain(v) for k, v in value.items()}
    if isinstance(value, torch.Tensor):
        return ("tensor", value.tolist())
    return value


def _run(migrate: Callable[..., Any], checkpoint: dict[str, Any], **options: Any) -> tuple[Any, Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        upgraded, applied = migrate(checkpoint, **options)
    return upgraded, applied, [type(w.message).__name__ for w in caught]


def _compare(old: dict[str, Any], **options: Any) -> tuple[dict[str, Any], dict[str, list[str]], list[str]]:
    """Both frameworks' results for copies of ``old``; asserts they match and returns accelplug's."""
    theirs, their_steps, their_warnings = _run(lightning_migration.migrate_checkpoint, copy.deepcopy(old), **options)
    ours, our_steps, our_warnings = _run(migrate_checkpoint, old, **options)
    assert _plain(ours) == _plain(theirs)
    assert our_steps == their_steps
    assert our_warnings == their_warnings  # the same categories, in the same order
    return ours, our_steps, our_warnings


@pytest.mark.parametrize("layout", sorted(OLD_LAYOUTS))
def test_an_old_layout_upgrades_to_what_lightnings_migrate_checkpoint_makes_of_it(layout: str) -> None:
    _compare(OLD_LAYOUTS[layout]())


@pytest.mark.parametrize("target", ["0.10.0", "1.6.0", "1.6.5", "1.9.0"])
def test_a_target_version_stops_the_upgrade_where_lightnings_stops(target: str) -> None:
    _, applied, _ = _compare(OLD_LAYOUTS["0.9.0-callback-keys-at-the-top"](), target_version=target)
    assert list(applied)[-1] == target


def test_the_upgrade_happens_in_place_and_records_the_release_that_wrote_the_file() -> None:
    old = OLD_LAYOUTS["1.5.10-no-loops"]()
    with pytest.warns(UserWarning, match="apex support has been removed"):
        upgraded, applied = migrate_checkpoint(old)
    assert upgraded is old
    assert (old["pytorch-lightning_version"], old["legacy_pytorch-lightning_version"]) == ("2.6.6", "1.5.10")
    assert list(applied) == ["1.6.0", "1.6.5", "1.9.0", "2.0.0"]
    upgraded_again, applied_again = migrate_checkpoint(old)
    assert applied_again == {} and upgraded_again["legacy_pytorch-lightning_version"] == "1.5.10"


def test_pre_0_10_callback_state_lands_under_accelplugs_callback_classes() -> None:
    # Lightning's 1.9 step then finds keys that are classes and keeps them as they are, warning
    with pytest.warns(PossibleUserWarning, match="state keys would become one after the upgrade"):
        upgraded, _ = migrate_checkpoint(OLD_LAYOUTS["0.9.0-callback-keys-at-the-top"]())
    assert upgraded["callbacks"][ModelCheckpoint] == {"best_model_score": 0.25, "best_model_path": "best.ckpt"}
    assert upgraded["callbacks"][EarlyStopping] == {"wait_count": 2, "patience": 5}


def test_a_file_from_a_newer_release_is_left_as_it_is_with_lightnings_warning() -> None:
    newer = OLD_LAYOUTS["9.1.0-a-newer-release"]()
    with pytest.warns(PossibleUserWarning, match="was produced with Lightning v9.1.0, which is newer than"):
        upgraded, applied = migrate_checkpoint(newer)
    assert applied == {} and upgraded["pytorch-lightning_version"] == "9.1.0"


def test_a_dictionary_without_a_version_is_a_key_error_naming_the_key() -> None:
    with pytest.raises(KeyError, match="pytorch-lightning_version"):
        migrate_checkpoint({"state_dict": {}})
    with pytest.raises(KeyError):
        lightning_migration.migrate_checkpoint({"state_dict": {}})


def test_the_release_stamped_is_lightning_pytorchs_version_as_code_may_replace_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import accelplug.pytorch as pl

    monkeypatch.setattr(pl, "__version__", "2.0.0")
    upgraded, _ = migrate_checkpoint({"pytorch-lightning_version": "0.0.1", "global_step": 2, "epoch": 0})
    assert (upgraded["pytorch-lightning_version"], upgraded["legacy_pytorch-lightning_version"]) == ("2.0.0", "0.0.1")
    monkeypatch.setattr(pl, "__version__", "3.0.0")
    again, _ = migrate_checkpoint(upgraded)
    assert (again["pytorch-lightning_version"], again["legacy_pytorch-lightning_version"]) == ("3.0.0", "0.0.1")
