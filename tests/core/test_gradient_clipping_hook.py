"""``configure_gradient_clipping`` gets the Trainer's clipping settings as given, and ``clip_gradients`` refuses a
value or algorithm that contradicts the Trainer's, as in Lightning 2.6 (compared side by side)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")


def _fit(framework: Any, root: Path, clip: Any, **options: Any) -> list[tuple[Any, Any]]:
    """Fit one batch with ``clip(module, optimizer)`` as the hook's body; the arguments the hook received."""
    received: list[tuple[Any, Any]] = []

    class Module(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            return self.layer(batch[0]).sum()

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

        def configure_gradient_clipping(
            self, optimizer: Any, gradient_clip_val: Any, gradient_clip_algorithm: Any
        ) -> None:
            received.append((gradient_clip_val, gradient_clip_algorithm))
            clip(self, optimizer)

    trainer = framework.Trainer(
        accelerator="cpu",
        max_epochs=1,
        limit_train_batches=1,
        logger=False,
        enable_progress_bar=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        default_root_dir=root / framework.__name__,
        **options,
    )
    loader = DataLoader(TensorDataset(torch.randn(2, 2)), batch_size=2)
    with quiet_lightning(framework):
        trainer.fit(Module(), loader)
    return received


@pytest.mark.parametrize("options", [{}, {"gradient_clip_val": 0.5}, {"gradient_clip_algorithm": "value"}])
def test_the_hook_receives_the_trainer_settings_as_given(tmp_path: Path, options: dict[str, Any]) -> None:
    nothing = lambda module, optimizer: None  # noqa: E731
    expected = _fit(lightning, tmp_path, nothing, **options)
    assert _fit(accelplug, tmp_path, nothing, **options) == expected
    assert [algorithm for _, algorithm in expected] == [options.get("gradient_clip_algorithm")]  # a str enum


@pytest.mark.parametrize(
    ("options", "clip_arguments", "phrase"),
    [
        ({"gradient_clip_val": 1e-4}, {"gradient_clip_val": 1e-2}, r"gradient_clip_val=0.0001\)` and have passed"),
        (
            {"gradient_clip_algorithm": "norm"},
            {"gradient_clip_algorithm": "value"},
            r"gradient_clip_algorithm='norm'\)` and",
        ),
    ],
)
def test_clip_gradients_refuses_what_contradicts_the_trainer(
    tmp_path: Path, options: dict[str, Any], clip_arguments: dict[str, Any], phrase: str
) -> None:
    def clip(module: Any, optimizer: Any) -> None:
        module.clip_gradients(optimizer, **clip_arguments)

    with pytest.raises(lightning.pytorch.utilities.exceptions.MisconfigurationException, match=phrase):
        _fit(lightning, tmp_path, clip, **options)
    with pytest.raises(accelplug.errors.MisconfigurationException, match=phrase):
        _fit(accelplug, tmp_path, clip, **options)
