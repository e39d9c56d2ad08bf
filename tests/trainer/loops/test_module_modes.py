"""Each submodule's train/eval mode through fit, validate and predict, side by side with Lightning 2.6.

Lightning never calls ``.train()`` on the whole module: a submodule left in eval mode (a frozen backbone, a
Hugging Face model loaded in eval mode) trains in eval mode, with a warning, and evaluation gives every
submodule back the mode it had. A project that relies on that gets the same losses under accelplug.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")

EVAL_MODE_WARNING = r"Found 3 module\(s\) in eval mode at the start of training"


def _loader(seed: int = 0) -> DataLoader[Any]:
    x = torch.randn(32, 4, generator=torch.Generator().manual_seed(seed))
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=8)


def _module(framework: Any, *, freeze_backbone: bool = True, mc_dropout: bool = False) -> Any:
    """A backbone (linear + dropout) the user froze in eval mode, and a head that trains; each step records the
    modes it saw and its loss."""

    class FrozenBackbone(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.backbone = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.5))
            self.head = torch.nn.Linear(8, 1)
            if freeze_backbone:
                self.backbone.eval()
            self.seen: list[tuple[str, bool, bool, bool]] = []
            self.losses: list[float] = []

        def _record(self, where: str) -> None:
            self.seen.append((where, self.training, self.backbone[1].training, self.head.training))

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            self._record("train")
            torch.manual_seed(batch_idx)  # the same dropout masks under both frameworks, when dropout is on
            x, y = batch
            loss = torch.nn.functional.mse_loss(self.head(self.backbone(x)), y)
            self.losses.append(float(loss.detach()))
            return loss

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            self._record("validate")

        def predict_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            self._record("predict")
            return self.head(self.backbone(batch[0]))

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    if mc_dropout:

        def on_validation_model_eval(self: Any) -> None:
            super(FrozenBackbone, self).on_validation_model_eval()
            self.backbone[1].train()  # Monte-Carlo dropout while validating

        FrozenBackbone.on_validation_model_eval = on_validation_model_eval

    return FrozenBackbone()


def _trainer(framework: Any, root: Path, **options: Any) -> Any:
    settings: dict[str, Any] = {
        "accelerator": "cpu",
        "devices": 1,
        "max_epochs": 2,
        "logger": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "enable_checkpointing": False,
        "num_sanity_val_steps": 1,
        "default_root_dir": root,
        **options,
    }
    return framework.Trainer(**settings)


def _fit(framework: Any, root: Path, **module_options: Any) -> Any:
    module = _module(framework, **module_options)
    with quiet_lightning(framework), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=EVAL_MODE_WARNING)  # asserted in its own test
        _trainer(framework, root).fit(module, _loader(), _loader(1))
    return module


def test_a_submodule_frozen_in_eval_mode_trains_in_eval_mode_as_in_lightning(tmp_path: Path) -> None:
    ours, theirs = _fit(accelplug, tmp_path / "a"), _fit(lightning, tmp_path / "l")
    assert ours.seen == theirs.seen
    assert {(training, dropout) for where, training, dropout, _ in ours.seen if where == "train"} == {(True, False)}
    assert ours.losses == theirs.losses  # dropout off in the frozen backbone under both


def test_each_submodule_gets_its_mode_back_after_validation(tmp_path: Path) -> None:
    module = _fit(accelplug, tmp_path)
    assert [where for where, *_ in module.seen[:2]] == ["validate", "train"]  # the sanity check, then training
    assert {tuple(modes) for where, *modes in module.seen if where == "validate"} == {(False, False, False)}
    assert module.training and module.head.training and not module.backbone.training


def test_the_fit_warns_about_modules_in_eval_mode_as_lightning_does(tmp_path: Path) -> None:
    for framework in (accelplug, lightning):
        module = _module(framework)
        with quiet_lightning(framework), pytest.warns(UserWarning, match=EVAL_MODE_WARNING) as caught:
            _trainer(framework, tmp_path / framework.__name__).fit(module, _loader(), _loader(1))
        [found] = [w for w in caught if "eval mode at the start of training" in str(w.message)]
        assert type(found.message).__name__ == "PossibleUserWarning"


def test_a_module_fully_in_train_mode_fits_without_the_warning(tmp_path: Path) -> None:
    module = _module(accelplug, freeze_backbone=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _trainer(accelplug, tmp_path).fit(module, _loader(), _loader(1))
    assert {tuple(modes) for where, *modes in module.seen if where == "train"} == {(True, True, True)}


def test_an_overridden_on_validation_model_eval_decides_the_modes_while_validating(tmp_path: Path) -> None:
    ours = _fit(accelplug, tmp_path / "a", freeze_backbone=False, mc_dropout=True)
    theirs = _fit(lightning, tmp_path / "l", freeze_backbone=False, mc_dropout=True)
    assert ours.seen == theirs.seen
    assert {tuple(modes) for where, *modes in ours.seen if where == "validate"} == {(False, True, False)}


def test_predict_gives_each_submodule_its_mode_back_as_lightning_does(tmp_path: Path) -> None:
    after = {}
    for framework in (accelplug, lightning):
        module = _module(framework)
        with quiet_lightning(framework):
            _trainer(framework, tmp_path / framework.__name__).predict(module, _loader())
        after[framework.__name__] = [m.training for m in module.modules()], module.seen
    assert after["accelplug"] == after["lightning"]
    assert after["accelplug"][0] == [True, False, False, False, True]


def test_a_strategys_wrapper_is_in_eval_mode_while_validating_as_in_lightning(tmp_path: Path) -> None:
    # trainer.model is DDP's wrapper here: Lightning's default on_validation_model_eval switches it, not only the
    # module inside it; afterwards the module's submodules get their modes back (the wrapper's flag stays as it is)
    seen = {}
    for name, framework in {"lightning": lightning, "accelplug": accelplug}.items():
        module = _module(framework, freeze_backbone=False)
        modes: list[tuple[str, bool, bool]] = []

        def record(where: str, module: Any = module, modes: list[tuple[str, bool, bool]] = modes) -> None:
            modes.append((where, module.trainer.model.training, module.training))

        module.on_validation_start = lambda record=record: record("validate")
        module.on_train_epoch_start = lambda record=record: record("train")
        trainer = _trainer(framework, tmp_path / name, strategy="ddp", max_epochs=2, num_sanity_val_steps=0)
        environment = dict(os.environ)
        try:
            with quiet_lightning(framework):
                trainer.fit(module, _loader(), _loader(1))
        finally:  # the one-process group and the rendezvous variables both frameworks leave behind
            if torch.distributed.is_initialized():
                torch.distributed.destroy_process_group()
            os.environ.clear()
            os.environ.update(environment)
        seen[name] = modes
    assert seen["accelplug"] == seen["lightning"]
    assert ("validate", False, False) in seen["accelplug"]
