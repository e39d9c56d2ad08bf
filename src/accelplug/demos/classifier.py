"""``accelplug demo``: a small real training run that shows what accelplug chose and why.

It trains a two-layer classifier on scikit-learn's handwritten digits (1,797 8x8 images shipped
inside scikit-learn, so nothing is downloaded) with ``accelerator="auto"`` unless told otherwise,
then prints why that accelerator was chosen, the final validation accuracy, the checkpoint and the
metrics CSV. Several devices run through ``accelplug launch`` (this file is also a script for it).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ..errors import MisconfigurationException

__all__ = ["ACCURACY_BAR", "DemoResult", "DigitsClassifier", "digits_loaders", "run_demo"]

#: The accuracy the demo must beat on the held-out digits to count as a success.
ACCURACY_BAR = 0.9


@dataclass(frozen=True)
class DemoResult:
    accelerator: str
    reason: str
    accuracy: float
    checkpoint: Path | None
    metrics_csv: Path | None

    @property
    def passed(self) -> bool:
        return self.accuracy > ACCURACY_BAR


class DigitsClassifier(torch.nn.Module):
    """64 pixels -> 128 hidden units -> 10 digits, written in the Lightning protocol."""

    def __init__(self, hidden: int = 128, lr: float = 3e-3) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(64, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 10))
        self.lr = lr

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)  # type: ignore[no-any-return]

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        return torch.nn.functional.cross_entropy(self(x), y)

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> dict[str, torch.Tensor]:
        x, y = batch
        logits = self(x)
        accuracy = (logits.argmax(dim=1) == y).float().mean()
        return {"loss": torch.nn.functional.cross_entropy(logits.float(), y), "val_acc": accuracy}

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=self.lr)


def digits_loaders(batch_size: int = 64, seed: int = 0) -> tuple[Any, Any]:
    """Train/validation loaders over scikit-learn's digits: a fixed 80/20 split, pixels scaled to [0, 1]."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise MisconfigurationException(
            'accelplug demo needs scikit-learn for its dataset: pip install "accelplug[demo]"'
        ) from None
    from torch.utils.data import DataLoader, TensorDataset

    digits = load_digits()
    x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
    y = torch.tensor(digits.target, dtype=torch.long)
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(seed))
    cut = int(0.8 * len(x))
    train, val = order[:cut], order[cut:]
    train_loader = DataLoader(TensorDataset(x[train], y[train]), batch_size=batch_size, shuffle=True)
    val_loader = DataLoader(TensorDataset(x[val], y[val]), batch_size=256)
    return train_loader, val_loader


def run_demo(
    *,
    cpu: bool = False,
    accelerator: str | None = None,
    devices: str | int | None = None,
    max_epochs: int = 15,
    root_dir: str | Path | None = None,
) -> DemoResult:
    """Train the digits classifier and print the report (on rank 0 when several processes run)."""
    if cpu and accelerator not in (None, "cpu"):
        raise MisconfigurationException(f"--cpu and --accelerator {accelerator!r} contradict each other; give one.")
    from ..config import load_settings  # the user's saved defaults (`accelplug config`)

    settings = load_settings()
    chosen = "cpu" if cpu else (accelerator or settings.accelerator)
    wanted_devices: Any = devices if devices is not None else 1
    if isinstance(wanted_devices, str) and wanted_devices.strip().lstrip("-").isdigit():
        wanted_devices = int(wanted_devices)
    if not isinstance(max_epochs, int) or max_epochs < 1:
        raise MisconfigurationException(f"--max-epochs={max_epochs!r} is invalid: expected an int >= 1.")
    train_loader, val_loader = digits_loaders()  # fails early and clearly without scikit-learn

    from ..selection import select
    from ..strategies.ddp import launched_by_torchrun

    selection = select(chosen, wanted_devices)
    # Made only once every check passed, so a refused run leaves no empty folder behind.
    root = Path(root_dir) if root_dir is not None else Path(tempfile.mkdtemp(prefix="accelplug-demo-"))
    if selection.num_devices > 1 and not launched_by_torchrun():
        return _launch_workers(chosen, selection.num_devices, max_epochs, root)
    from ..trainer import Trainer

    trainer = Trainer(
        accelerator=chosen,
        devices=wanted_devices,
        precision=settings.precision,
        max_epochs=max_epochs,
        default_root_dir=root,
        seed=0,
        log_every_n_steps=5,
        logger="csv",  # the demo reports its metrics file
    )
    if trainer.is_global_zero:
        print(f"accelplug demo: training on {trainer.accelerator.name!r} ({trainer.root_device}).")
        print(f"  why: {trainer.selection.reason}")
    torch.manual_seed(0)
    model = DigitsClassifier()
    threads = torch.get_num_threads()
    if trainer.root_device.type == "cpu":
        # A model this small gains nothing from intra-op threads, and on a busy machine OpenMP
        # threads spinning for a free core make each step a hundred times slower.
        torch.set_num_threads(1)
    try:
        trainer.fit(model, train_loader, val_loader)
        accuracy = trainer.validate(model, val_loader, verbose=False)[0]["val_acc"]
    finally:
        torch.set_num_threads(threads)
    callback = trainer.checkpoint_callback
    result = DemoResult(
        accelerator=trainer.accelerator.name,
        reason=trainer.selection.reason,
        accuracy=accuracy,
        # the newest file the checkpoint callback wrote (Lightning's default writes no last.ckpt)
        checkpoint=Path(callback.last_model_path or callback.best_model_path) if callback else None,
        metrics_csv=trainer.metrics_path,
    )
    if trainer.is_global_zero:
        verdict = "passed" if result.passed else "FAILED"
        print(f"  validation accuracy: {accuracy:.3f} ({verdict}: the bar is {ACCURACY_BAR})")
        print(f"  checkpoint: {result.checkpoint}")
        print(f"  metrics CSV: {result.metrics_csv}")
    return result


def _launch_workers(accelerator: str, nproc: int, max_epochs: int, root: Path) -> DemoResult:
    """Run this file as ``nproc`` workers; the report is printed by rank 0."""
    from ..launcher import launch

    args = ["--max-epochs", str(max_epochs), "--root-dir", str(root), "--accelerator", accelerator]
    code = launch(
        __name__ if __name__ != "__main__" else "accelplug.demos.classifier",
        args,
        accelerator=accelerator,
        devices=nproc,
        as_module=True,
    )
    accuracy = 1.0 if code == 0 else 0.0  # the workers exit non-zero when the bar is missed
    return DemoResult(accelerator, f"{nproc} processes through accelplug launch", accuracy, None, None)


def main(argv: list[str] | None = None) -> int:
    """Entry point when this file runs as a worker script under ``accelplug launch``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--accelerator", default=None)
    parser.add_argument("--max-epochs", type=int, default=15)
    parser.add_argument("--root-dir", default=None)
    ns = parser.parse_args(argv)
    result = run_demo(accelerator=ns.accelerator, devices="auto", max_epochs=ns.max_epochs, root_dir=ns.root_dir)
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
