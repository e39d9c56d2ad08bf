"""A ``DataLoader``'s persistent worker processes end with the Trainer call that used them, as in Lightning 2.6.

``persistent_workers=True`` keeps the workers alive from one epoch to the next; Lightning's loops stop them when a
fit, validate, test or predict call ends (also one that failed), so no process with a copy of the dataset outlives
the call. Counted for real: the live children of this process (each worker is one), one worker per loader.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug

lightning = pytest.importorskip("lightning", reason="the counts are compared with lightning's, not installed here")

FRAMEWORKS = {"lightning": lightning, "accelplug": accelplug}


def _module(framework: Any, *, fail: bool = False) -> Any:
    class Module(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            if fail:
                raise RuntimeError("the step failed")
            return self.layer(batch[0]).sum()

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            self.layer(batch[0])

        def test_step(self, batch: Any, batch_idx: int) -> None:
            self.layer(batch[0])

        def predict_step(self, batch: Any, batch_idx: int) -> Any:
            return self.layer(batch[0])

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return Module()


def _loader() -> DataLoader[Any]:
    return DataLoader(TensorDataset(torch.randn(8, 2)), batch_size=4, num_workers=1, persistent_workers=True)


def _trainer(framework: Any, tmp_path: Path) -> Any:
    return framework.Trainer(
        accelerator="cpu", devices=1, max_epochs=1, logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False, default_root_dir=tmp_path,
    )  # fmt: skip


def _live_workers() -> int:
    return len(multiprocessing.active_children())


@pytest.mark.filterwarnings("ignore:The '\\w+_dataloader' does not have many workers")
@pytest.mark.parametrize("call", ["fit", "validate", "test", "predict"])
@pytest.mark.parametrize("name", FRAMEWORKS)
def test_persistent_workers_are_stopped_when_the_call_ends(name: str, call: str, tmp_path: Path) -> None:
    framework = FRAMEWORKS[name]
    trainer, before = _trainer(framework, tmp_path), _live_workers()
    loader = _loader()
    if call == "fit":
        trainer.fit(_module(framework), loader, _loader())
    else:
        getattr(trainer, call)(_module(framework), loader)
    assert _live_workers() == before


@pytest.mark.filterwarnings("ignore:The '\\w+_dataloader' does not have many workers")
# Lightning's note on the validation_step this fit has no loader for
@pytest.mark.filterwarnings("ignore:You defined a `validation_step` but have no `val_dataloader`")
@pytest.mark.parametrize("name", FRAMEWORKS)
def test_persistent_workers_are_stopped_when_the_fit_fails(name: str, tmp_path: Path) -> None:
    framework = FRAMEWORKS[name]
    trainer, before = _trainer(framework, tmp_path), _live_workers()
    with pytest.raises(RuntimeError, match="the step failed"):
        trainer.fit(_module(framework, fail=True), _loader())
    assert _live_workers() == before
