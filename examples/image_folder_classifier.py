"""Train an image classifier on a folder of class sub-folders, on whatever accelerator is here.

    DIR/
      cat/  img001.jpg img002.png ...
      dog/  ...

    python examples/image_folder_classifier.py --data_dir DIR
    accelplug launch --devices 2 examples/image_folder_classifier.py --data_dir DIR

Images are read with Pillow and numpy only (no torchvision), resized to a square and kept in memory,
so the example suits the few-thousand-image folders it is meant for. A fixed 80/20 split gives the
validation accuracy printed at the end.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader, Subset, TensorDataset

from accelplug import Trainer

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp"}


def load_image_folder(root: Path, size: int) -> tuple[TensorDataset, list[str]]:
    """Every image under ``root/<class>/`` as a float tensor (3, size, size) in [0, 1], with its class index."""
    from PIL import Image

    classes = sorted(p.name for p in root.iterdir() if p.is_dir())
    if not classes:
        raise SystemExit(f"{root} has no class sub-folders; expected {root}/<class name>/<images>")
    images, labels = [], []
    for index, name in enumerate(classes):
        for path in sorted((root / name).iterdir()):
            if path.suffix.lower() not in IMAGE_SUFFIXES:
                continue
            with Image.open(path) as image:
                pixels = np.asarray(image.convert("RGB").resize((size, size)), dtype=np.float32) / 255.0
            images.append(torch.from_numpy(pixels).permute(2, 0, 1))
            labels.append(index)
    if not images:
        raise SystemExit(f"no images ({', '.join(sorted(IMAGE_SUFFIXES))}) found under {root}")
    return TensorDataset(torch.stack(images), torch.tensor(labels)), classes


class SmallConvNet(torch.nn.Module):
    def __init__(self, num_classes: int, lr: float) -> None:
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(16, 32, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1),
        )
        self.head = torch.nn.Linear(32, num_classes)
        self.lr = lr

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).flatten(1))  # type: ignore[no-any-return]

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        return torch.nn.functional.cross_entropy(self(x), y)

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> dict[str, torch.Tensor]:
        x, y = batch
        logits = self(x)
        return {
            "loss": torch.nn.functional.cross_entropy(logits.float(), y),
            "val_acc": (logits.argmax(1) == y).float().mean(),
        }

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=self.lr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data_dir", "--data-dir", required=True, type=Path)
    parser.add_argument("--image-size", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--accelerator", default="auto")
    parser.add_argument("--devices", default="auto")
    parser.add_argument("--precision", default="32-true")
    parser.add_argument("--root-dir", default=None)
    args = parser.parse_args()

    dataset, classes = load_image_folder(args.data_dir, args.image_size)
    order = torch.randperm(len(dataset), generator=torch.Generator().manual_seed(0)).tolist()
    cut = max(1, int(0.8 * len(order)))
    train, val = Subset(dataset, order[:cut]), Subset(dataset, order[cut:] or order[:1])
    trainer = Trainer(
        accelerator=args.accelerator,
        devices=args.devices,
        precision=args.precision,
        max_epochs=args.max_epochs,
        default_root_dir=args.root_dir,
        seed=0,
        log_every_n_steps=5,
    )
    torch.manual_seed(0)
    model = SmallConvNet(len(classes), args.lr)
    trainer.fit(
        model,
        DataLoader(train, batch_size=args.batch_size, shuffle=True),
        DataLoader(val, batch_size=args.batch_size),
    )
    if trainer.is_global_zero:
        accuracy = trainer.callback_metrics.get("val_acc", float("nan"))
        print(f"{len(dataset)} images, classes {classes}: validation accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main()
