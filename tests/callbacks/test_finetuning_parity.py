"""BaseFinetuning and BackboneFinetuning against Lightning 2.6: the same param groups, learning rates and weights
epoch by epoch, a resume that re-adds the groups, and the refusals."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

import pytest
import torch

import accelplug
from accelplug.callbacks import BackboneFinetuning, BaseFinetuning
from accelplug.errors import MisconfigurationException

from .parity import FRAMEWORKS, data, make_module


def backbone_module(framework: Any) -> Any:
    class WithBackbone(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.backbone = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.ReLU())
            self.head = torch.nn.Linear(8, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.head(self.backbone(x))  # type: ignore[no-any-return]

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            x, y = batch
            return torch.nn.functional.mse_loss(self(x), y)

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(filter(lambda p: p.requires_grad, self.parameters()), lr=0.05, momentum=0.9)

        def train_dataloader(self) -> Any:
            return data()

    return WithBackbone()


class Recorder:
    """Each epoch's param group sizes and learning rates, read at the epoch's end."""

    def __init__(self) -> None:
        self.seen: list[list[tuple[int, float]]] = []

    def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        groups = trainer.optimizers[0].param_groups
        self.seen.append([(len(g["params"]), round(g["lr"], 10)) for g in groups])


#: both frameworks warn when the backbone joins: its BatchNorm layers stayed trainable (train_bn=True), so the
#: optimizer built from the trainable parameters already holds them
ALREADY_HELD = "The provided params to be frozen already exist within another group of this optimizer"
#: both warn when a fit resumes into another folder: the old folder's top-k bookkeeping is not restored
DIRPATH_CHANGED = {"lightning": "The dirpath has changed from", "accelplug": "The dirpath has changed from"}


def _fit(
    framework: Any, root: Path, callback: Any, epochs: int, ckpt_path: str | None = None, expect: tuple[str, ...] = ()
) -> tuple[Any, Any]:
    record = Recorder()
    recorder = type("R", (framework.pytorch.callbacks.Callback,), {"on_train_epoch_end": record.on_train_epoch_end})()
    trainer = framework.Trainer(
        accelerator="cpu",
        max_epochs=epochs,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=root,
        callbacks=[callback, recorder],
    )
    module = backbone_module(framework)
    with contextlib.ExitStack() as stack:
        for message in expect:
            stack.enter_context(pytest.warns(UserWarning, match=re.escape(message)))
        trainer.fit(module, ckpt_path=ckpt_path)
    return module, record


def _backbone(framework: Any) -> Any:
    return framework.pytorch.callbacks.BackboneFinetuning(
        unfreeze_backbone_at_epoch=1, lambda_func=lambda epoch: 1.5, backbone_initial_ratio_lr=0.1
    )


def test_backbone_finetuning_groups_lrs_and_weights_match_lightning(tmp_path: Path) -> None:
    results = {}
    for name, framework in FRAMEWORKS.items():
        results[name] = _fit(framework, tmp_path / name, _backbone(framework), epochs=4, expect=(ALREADY_HELD,))
    (l_module, l_record), (a_module, a_record) = results["lightning"], results["accelplug"]
    assert a_record.seen == l_record.seen
    assert [len(e) for e in a_record.seen] == [1, 2, 2, 2]  # the backbone joined at epoch 1
    for ours, theirs in zip(a_module.state_dict().values(), l_module.state_dict().values(), strict=True):
        torch.testing.assert_close(ours, theirs)


def test_a_resumed_fit_re_adds_the_param_groups_as_lightning(tmp_path: Path) -> None:
    results = {}
    for name, framework in FRAMEWORKS.items():
        root = tmp_path / name
        _fit(framework, root, _backbone(framework), epochs=2, expect=(ALREADY_HELD,))
        ckpt = next((root / "checkpoints").glob("*.ckpt"))
        resumed = root / "resumed"
        expect = (DIRPATH_CHANGED[name],)  # the groups come back from the checkpoint: nothing is added twice
        results[name] = _fit(framework, resumed, _backbone(framework), epochs=4, ckpt_path=str(ckpt), expect=expect)
    (l_module, l_record), (a_module, a_record) = results["lightning"], results["accelplug"]
    assert a_record.seen == l_record.seen == [l_record.seen[0], l_record.seen[1]]
    for ours, theirs in zip(a_module.state_dict().values(), l_module.state_dict().values(), strict=True):
        torch.testing.assert_close(ours, theirs)


def test_the_static_helpers_freeze_and_unfreeze_as_lightning() -> None:
    lightning_base = FRAMEWORKS["lightning"].pytorch.callbacks.BaseFinetuning
    for train_bn in (True, False):
        found = []
        for base in (lightning_base, BaseFinetuning):
            torch.manual_seed(0)
            model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.BatchNorm1d(3), torch.nn.Linear(3, 2))
            base.freeze(model, train_bn=train_bn)
            frozen = [p.requires_grad for p in model.parameters()]
            stats = [m.track_running_stats for m in model.modules() if isinstance(m, torch.nn.BatchNorm1d)]
            optimizer = torch.optim.SGD([model[2].weight], lr=0.1)
            with pytest.warns(UserWarning, match="already exist"):
                base.unfreeze_and_add_param_group(model, optimizer, train_bn=train_bn)
            groups = [(len(g["params"]), g["lr"]) for g in optimizer.param_groups]
            found.append((frozen, stats, groups, len(base.flatten_modules(model))))
        assert found[0] == found[1]


def test_refusals() -> None:
    trainer = accelplug.Trainer(
        accelerator="cpu", max_epochs=1, logger=False, enable_progress_bar=False, callbacks=[BackboneFinetuning()]
    )
    with pytest.raises(MisconfigurationException, match="backbone"):
        trainer.fit(make_module(accelplug, validation=False))
    with pytest.raises(MisconfigurationException, match="unfreeze_backbone_at_epoch"):
        BackboneFinetuning(unfreeze_backbone_at_epoch="1")  # type: ignore[arg-type]
    with pytest.raises(MisconfigurationException, match="lambda_func"):
        BackboneFinetuning(lambda_func=2.0)  # type: ignore[arg-type]
    with pytest.raises(MisconfigurationException, match="modules="):
        BaseFinetuning.flatten_modules(3)  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match="finetune_function"):
        BaseFinetuning().finetune_function(torch.nn.Linear(1, 1), 0, torch.optim.SGD([torch.zeros(1)], lr=1))
