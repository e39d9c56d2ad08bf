"""A ``training_step`` that returns None skips its batch, on one process only: with several, the others would wait
for its gradients, so Lightning 2.6 refuses it with a ``RuntimeError``, on either of accelplug's batch paths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from tests.callbacks.parity import FRAMEWORKS, quiet_lightning


def _fit_skipping(framework: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, world_size: int, hook: bool) -> Any:
    """``fit`` of a module whose ``training_step`` returns None, the strategy reporting ``world_size`` processes
    (no process is started); ``hook``: an ``on_before_backward`` hook, which takes accelplug's general path."""

    class Skipping(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> None:
            return None

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    if hook:
        Skipping.on_before_backward = lambda self, loss: None
    trainer = framework.Trainer(
        default_root_dir=tmp_path,
        max_steps=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    if framework is FRAMEWORKS["lightning"]:
        trainer.strategy.world_size = world_size  # a plain attribute in Lightning
    else:
        monkeypatch.setattr(type(trainer.strategy), "world_size", property(lambda self: world_size))
    with quiet_lightning(framework):
        try:
            trainer.fit(Skipping(), [torch.randn(4, 2)])
        except RuntimeError as exc:
            return "refused" if "Skipping the `training_step` by returning None" in str(exc) else repr(exc)
    return trainer.global_step


@pytest.mark.parametrize("hook", [False, True], ids=["lean-path", "general-path"])
@pytest.mark.parametrize("world_size", [1, 2])
def test_returning_none_is_refused_with_several_processes_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, world_size: int, hook: bool
) -> None:
    got = {
        name: _fit_skipping(framework, tmp_path / name, monkeypatch, world_size, hook)
        for name, framework in FRAMEWORKS.items()
    }
    assert got["accelplug"] == got["lightning"] == ("refused" if world_size > 1 else 1)
