"""``trainer.save_checkpoint`` for a module connected by hand (``trainer.strategy.connect(model)``) before any call.

Lightning 2.6.6 saves it as a run at its start: epoch and step 0, the module's weights and hyper-parameters, no
optimizer state (none exists yet), the callbacks' states and what ``on_save_checkpoint`` adds; a later
``fit(ckpt_path=...)`` starts from it with fresh optimizers. accelplug does the same; without any module it raises
Lightning's ``AttributeError`` (``tests/trainer/options/test_lightning_refusals.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the files are compared with lightning's, not installed here")

FRAMEWORKS = {"lightning": lightning, "accelplug": accelplug}


def _module(framework: Any) -> Any:
    class Module(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self, width: int = 2) -> None:
            super().__init__()
            self.save_hyperparameters()
            self.layer = torch.nn.Linear(width, 1)

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            return self.layer(batch[0]).sum()

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

        def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
            checkpoint["saved_by_the_hook"] = True

    torch.manual_seed(0)
    return Module()


def _trainer(framework: Any, tmp_path: Path, **options: Any) -> Any:
    return framework.Trainer(
        accelerator="cpu", devices=1, logger=False, enable_progress_bar=False, enable_model_summary=False,
        default_root_dir=tmp_path, **options,
    )  # fmt: skip


def _saved_connected(framework: Any, tmp_path: Path, **options: Any) -> dict[str, Any]:
    trainer, module = _trainer(framework, tmp_path, **options), _module(framework)
    trainer.strategy.connect(module)
    trainer.save_checkpoint(tmp_path / "connected.ckpt")
    return dict(torch.load(tmp_path / "connected.ckpt", weights_only=False))


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_a_connected_module_is_saved_as_a_run_at_its_start(name: str, tmp_path: Path) -> None:
    with quiet_lightning():
        saved = _saved_connected(FRAMEWORKS[name], tmp_path)
    assert (saved["epoch"], saved["global_step"]) == (0, 0)
    assert saved["optimizer_states"] == saved["lr_schedulers"] == []
    assert saved["hyper_parameters"] == {"width": 2}
    assert saved["saved_by_the_hook"] is True
    assert set(saved["state_dict"]) == {"layer.weight", "layer.bias"}
    assert set(saved["loops"]) == {"fit_loop", "validate_loop", "test_loop", "predict_loop"}
    assert [key.split("{")[0] for key in saved["callbacks"]] == ["ModelCheckpoint"]


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_a_fit_starts_from_a_connected_modules_checkpoint_with_fresh_optimizers(name: str, tmp_path: Path) -> None:
    framework = FRAMEWORKS[name]
    with quiet_lightning():
        # no checkpoint callback, before and after: nothing to say about callbacks missing on resume
        saved = _saved_connected(framework, tmp_path, enable_checkpointing=False)
        trainer = _trainer(framework, tmp_path, max_epochs=1, enable_checkpointing=False)
        module = _module(framework)
        torch.nn.init.zeros_(module.layer.weight)  # the checkpoint's weights must come back
        data = DataLoader(TensorDataset(torch.randn(4, 2)), batch_size=2)
        first_weights: list[torch.Tensor] = []

        class FirstStep(framework.Callback):  # type: ignore[misc, name-defined]
            def on_train_batch_start(self, *_: Any) -> None:
                if not first_weights:
                    first_weights.append(module.layer.weight.detach().clone())

        trainer.callbacks.append(FirstStep())
        trainer.fit(module, data, ckpt_path=tmp_path / "connected.ckpt")
    assert trainer.global_step == 2
    torch.testing.assert_close(first_weights[0], saved["state_dict"]["layer.weight"])
