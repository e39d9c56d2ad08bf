"""Whether a resumed fit runs the sanity check, side by side with Lightning 2.6.6.

Lightning runs it again when the checkpoint's epoch had processed its training batches (a file written by the
epoch-end hooks, as the default ``ModelCheckpoint`` writes it) and the fit counts epochs; it skips it for a file
written inside an epoch (``every_n_train_steps``) and for a fit bounded by ``max_steps``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from tests.callbacks.parity import quiet_lightning
from tests.trainer.loops.both import FRAMEWORKS, loader

pytestmark = pytest.mark.filterwarnings(
    "ignore:The '.*dataloader' does not have many workers:UserWarning",
    "ignore:The dirpath has changed from:UserWarning",
    "ignore:You're resuming from a checkpoint that ended before the epoch ended:UserWarning",
)


Call = tuple[str, bool, int, int]  # (hook, sanity checking, epoch, global step)


def _module(framework: Any, calls: list[Call]) -> Any:
    class Recorder(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            x, y = batch
            return torch.nn.functional.mse_loss(self.layer(x), y)

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            calls.append(("validation_step", bool(self.trainer.sanity_checking), self.current_epoch, self.global_step))

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.01)

    return Recorder()


def _calls_of_resume(framework: Any, root: Path, checkpoint: Any, **resume: Any) -> list[Call]:
    settings: dict[str, Any] = {
        "accelerator": "cpu",
        "logger": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "limit_train_batches": 4,
        "limit_val_batches": 1,
        "num_sanity_val_steps": 1,
    }
    first = framework.Trainer(default_root_dir=root / "first", max_epochs=1, callbacks=[checkpoint], **settings)
    first.fit(_module(framework, []), loader(16), loader(4))
    path = sorted(Path(checkpoint.dirpath).glob("*.ckpt"))[0]
    calls: list[Call] = []
    again = framework.Trainer(default_root_dir=root / "again", **{**settings, **resume})
    again.fit(_module(framework, calls), loader(16), loader(4), ckpt_path=path)
    return calls


@pytest.mark.parametrize(
    ("saved_at", "resume", "sanity"),
    [
        ("epoch_end", {"max_epochs": 2}, True),
        ("step_3", {"max_epochs": 2}, False),
        ("epoch_end", {"max_steps": 8}, False),
    ],
)
def test_a_resumed_fit_sanity_checks_as_lightning_decides(
    tmp_path: Path, saved_at: str, resume: dict[str, Any], sanity: bool
) -> None:
    records = {}
    for name, framework in FRAMEWORKS.items():
        folder = tmp_path / name / "checkpoints"
        callbacks = framework.pytorch.callbacks if name == "lightning" else framework.callbacks
        if saved_at == "epoch_end":
            checkpoint = callbacks.ModelCheckpoint(dirpath=folder)
        else:
            checkpoint = callbacks.ModelCheckpoint(dirpath=folder, every_n_train_steps=3, save_top_k=1)
        with quiet_lightning(framework):
            records[name] = _calls_of_resume(framework, tmp_path / name, checkpoint, **resume)
    assert records["accelplug"] == records["lightning"]
    assert any(call[1] for call in records["accelplug"]) is sanity
