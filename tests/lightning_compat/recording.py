"""One Lightning-style module and callback that record every hook, built on either framework's base classes.

The same class body runs under Lightning and under accelplug, so a parity test can compare the two
call sequences (and the per-step losses) line by line.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils.data import DataLoader, TensorDataset

from accelplug.trainer.dispatch.hooks import CALLBACK_HOOKS, MODULE_HOOKS

STEP_METHODS = (
    "training_step",
    "validation_step",
    "test_step",
    "predict_step",
    "configure_optimizers",
    "configure_callbacks",
    "train_dataloader",
    "val_dataloader",
    "test_dataloader",
    "predict_dataloader",
)
#: Checkpoint-state hooks: Lightning calls them for every callback at every save; not part of the loop's order.
IGNORED = ("state_dict", "load_state_dict", "on_save_checkpoint", "on_load_checkpoint", "on_exception")


def _data(n: int, seed: int) -> DataLoader[Any]:
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=generator)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.1
    return DataLoader(TensorDataset(x, y), batch_size=4)


def make_module(base: type, calls: list[str], *, manual: bool = False, scheduler: bool = False) -> Any:
    """A regression module on ``base`` whose every hook appends its name to ``calls``."""

    class Recorder(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.layer = torch.nn.Linear(4, 1)
            self.losses: list[float] = []
            if manual:
                self.automatic_optimization = False

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.layer(x)  # type: ignore[no-any-return]

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            x, y = batch
            loss = torch.nn.functional.mse_loss(self(x), y)
            self.losses.append(float(loss.detach()))
            self.log("train_loss", loss)
            if manual:
                optimizer = self.optimizers()
                optimizer.zero_grad()
                self.manual_backward(loss)
                optimizer.step()
                return None
            return loss

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            x, y = batch
            self.log("val_loss", torch.nn.functional.mse_loss(self(x), y))

        def test_step(self, batch: Any, batch_idx: int) -> None:
            x, y = batch
            self.log("test_loss", torch.nn.functional.mse_loss(self(x), y))

        def predict_step(self, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> Any:
            return self(batch[0])

        def configure_optimizers(self) -> Any:
            optimizer = torch.optim.SGD(self.parameters(), lr=0.05)
            if not scheduler:
                return optimizer
            return {"optimizer": optimizer, "lr_scheduler": torch.optim.lr_scheduler.StepLR(optimizer, 1, 0.5)}

        def train_dataloader(self) -> Any:
            return _data(16, 1)

        def val_dataloader(self) -> Any:
            return _data(8, 2)

        def test_dataloader(self) -> Any:
            return _data(8, 3)

        def predict_dataloader(self) -> Any:
            return _data(8, 4)

    def recorder_for(name: str) -> Any:
        original = getattr(Recorder, name, None) or getattr(base, name)

        def hook(self: Any, *args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return original(self, *args, **kwargs)

        hook.__name__ = name
        return hook

    for name in (*MODULE_HOOKS, *STEP_METHODS):
        if name in IGNORED or not (hasattr(Recorder, name) or hasattr(base, name)):
            continue
        setattr(Recorder, name, recorder_for(name))
    return Recorder()


def make_callback(base: type, calls: list[str]) -> Any:
    """A callback on ``base`` whose every hook appends ``cb.<name>`` to ``calls``."""

    class CallbackRecorder(base):  # type: ignore[misc, valid-type]
        pass

    def recorder_for(name: str) -> Any:
        def hook(self: Any, *args: Any, **kwargs: Any) -> None:
            calls.append(f"cb.{name}")

        hook.__name__ = name
        return hook

    for name in CALLBACK_HOOKS:
        if name not in IGNORED and hasattr(base, name):
            setattr(CallbackRecorder, name, recorder_for(name))
    return CallbackRecorder()
