"""Train a small LightningModule on XLA, checkpoint it, resume it on XLA and on the CPU, and print the figures.

Run it in the XLA environment (docs/plugins/xla.md), on this machine's CPU through PJRT:

    PJRT_DEVICE=CPU .venv-xla/bin/python plugins/accelplug-xla/examples/train_on_xla.py

It trains scikit-learn-free synthetic regression (8 features, 2,048 samples) for 3 epochs, and prints
the validation loss before and after, the time of each stage, and what the checkpoint round trips
gave: the weights after resuming on XLA (which must equal an uninterrupted run's exactly) and on the
CPU (equal up to float rounding).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug as L

FEATURES = 8


def data(n: int, seed: int, shuffle: bool) -> DataLoader[Any]:
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, FEATURES, generator=generator)
    y = torch.sin(x[:, :1]) + 0.5 * x[:, 1:2] * x[:, 2:3] - 0.2 * x[:, 3:4]
    return DataLoader(TensorDataset(x, y), batch_size=64, shuffle=shuffle)


class Net(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(FEATURES, 64), torch.nn.ReLU(), torch.nn.Dropout(0.1), torch.nn.Linear(64, 1)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.net(x)
        return out

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        self.log("train_loss", loss, on_step=False, on_epoch=True)
        return loss

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self(x), y))

    def test_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        x, y = batch
        self.log("test_loss", torch.nn.functional.mse_loss(self(x), y))

    def predict_step(self, batch: Any, batch_idx: int = 0, dataloader_idx: int = 0) -> Any:
        return self(batch[0])

    def configure_optimizers(self) -> Any:
        return torch.optim.Adam(self.parameters(), lr=3e-3)


def trainer(accelerator: str, epochs: int, folder: Path) -> L.Trainer:
    return L.Trainer(
        accelerator=accelerator,
        devices=1,
        max_epochs=epochs,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        default_root_dir=folder,
    )


def weights(module: torch.nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().flatten().cpu() for p in module.parameters()])


def seeded() -> Net:
    L.seed_everything(0, verbose=False)
    return Net()


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="accelplug-xla-"))
    train, val = data(2048, seed=0, shuffle=True), data(512, seed=1, shuffle=False)

    before = trainer("xla", 1, folder / "untrained").validate(seeded(), val, verbose=False)[0]["val_loss"]
    model = seeded()  # the same initial weights, and the random generators as a fresh run has them
    t = trainer("xla", 3, folder / "straight")
    print(f"accelerator={t.accelerator.name} strategy={t.strategy.name} device={t.root_device}")
    start = time.perf_counter()
    t.fit(model, train, val)
    fit_s = time.perf_counter() - start
    after = t.validate(model, val, verbose=False)[0]["val_loss"]
    tested = t.test(model, val, verbose=False)[0]["test_loss"]
    predictions = t.predict(model, val)
    print(f"fit: 3 epochs x {len(train)} steps in {fit_s:.1f} s (the first steps include XLA's compilation)")
    print(f"validation loss: {before:.4f} before, {after:.4f} after; test loss {tested:.4f}")
    print(f"train loss (last epoch): {float(t.callback_metrics['train_loss']):.4f}")
    print(f"predict: {len(predictions)} batches on {predictions[0].device}")

    first = seeded()
    t1 = trainer("xla", 1, folder / "first")
    t1.fit(first, train, val)
    path = t1.save_checkpoint(folder / "epoch1.ckpt")
    on_disk = torch.load(path, weights_only=True)
    devices = {v.device.type for v in on_disk["state_dict"].values()}
    print(f"checkpoint after 1 epoch: {path.name}, tensors on {sorted(devices)}, device RNG {on_disk['rng']['device']}")

    resumed = Net()
    trainer("xla", 3, folder / "resumed").fit(resumed, train, val, ckpt_path=path)
    same = torch.equal(weights(resumed), weights(model))
    print(f"resumed on XLA for epochs 2-3: weights equal to the uninterrupted run: {same}")

    on_cpu = Net()
    trainer("cpu", 3, folder / "cpu").fit(on_cpu, train, val, ckpt_path=path)
    gap = (weights(on_cpu) - weights(model)).abs().max().item()
    cpu_val = trainer("cpu", 1, folder / "cpu").validate(on_cpu, val, verbose=False)[0]["val_loss"]
    print(f"resumed on the CPU for epochs 2-3: val loss {cpu_val:.4f}; largest weight difference to XLA {gap:.2e}")
    print("  (dropout draws from the CPU generator there, not from XLA's, so the two runs differ by that)")
    return 0 if same and after < before else 1


if __name__ == "__main__":
    sys.exit(main())
