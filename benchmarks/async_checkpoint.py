"""Training step time while checkpoints are saved: synchronous writes against ``AsyncCheckpointIO``.

The model is a stack of square ``Linear`` layers trained with Adam, sized so that a checkpoint (weights plus
Adam's two moments) is about 1 GB (``--quick``: about 64 MB). Every ``--every`` steps a callback asks
``trainer.save_checkpoint``; a round is one fit of ``--steps`` steps, and the rounds of the three settings
are interleaved (sync, async, baseline, sync, ...) so the machine's drift touches all alike:

- ``baseline``: a hand-written PyTorch loop over the same model and data, no saves;
- ``hand_save``: the same loop calling ``torch.save`` on the same state every ``--every`` steps (what a
  hand-written loop pays for a synchronous save);
- ``sync``: the Trainer with the default ``TorchCheckpointIO`` (the step that saves waits for the disk);
- ``async``: the Trainer with ``plugins=[AsyncCheckpointIO()]`` (that step waits for a CPU copy only).

Reported: mean ms per step over all steps of each setting, and the ratios to the baseline. ``--threads N`` sets
torch's intra-op threads (on a 2-core machine ``--threads 1`` leaves the background writer a core of its own).
Each mode's files go to its own temporary folder, removed at the end. ``python benchmarks/async_checkpoint.py
[--quick] [--device cuda] [--threads N] [--out benchmarks/results/x.json]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from accelplug.plugins import AsyncCheckpointIO


class Stack(accelplug.LightningModule):
    def __init__(self, width: int, depth: int) -> None:
        super().__init__()
        self.layers = torch.nn.Sequential(*[torch.nn.Linear(width, width) for _ in range(depth)])

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        (x,) = batch
        loss: torch.Tensor = self.layers(x).pow(2).mean()
        return loss

    def configure_optimizers(self) -> Any:
        return torch.optim.Adam(self.parameters(), lr=1e-5)


class StepClock(accelplug.Callback):
    """Times every training step (batch end to batch end) and saves every ``every`` steps."""

    def __init__(self, every: int, folder: Path) -> None:
        self.every, self.folder, self._last = every, folder, 0.0
        self.times: list[float] = []

    def on_train_batch_start(self, trainer: Any, *args: Any) -> None:
        if not self._last:
            self._last = time.perf_counter()

    def on_train_batch_end(self, trainer: Any, *args: Any) -> None:
        if trainer.global_step % self.every == 0:
            trainer.save_checkpoint(self.folder / f"step{trainer.global_step}.ckpt")
        if trainer.root_device.type == "cuda":
            torch.cuda.synchronize()
        now = time.perf_counter()
        self.times.append(now - self._last)
        self._last = now


def _loader(width: int, steps: int, batch: int) -> DataLoader[Any]:
    return DataLoader(TensorDataset(torch.randn(steps * batch, width)), batch_size=batch)


def trainer_round(mode: str, args: argparse.Namespace, folder: Path) -> list[float]:
    clock = StepClock(args.every, folder)
    plugins = [AsyncCheckpointIO()] if mode == "async" else None
    trainer = accelplug.Trainer(
        accelerator=args.device,
        devices=1,
        max_steps=args.steps,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[clock],
        plugins=plugins,
    )
    trainer.fit(Stack(args.width, args.depth), _loader(args.width, args.steps, args.batch))
    return clock.times[1:]  # the first step also pays for start-up


def baseline_round(args: argparse.Namespace, folder: Path | None = None) -> list[float]:
    """The hand-written loop; with ``folder``, a plain ``torch.save`` of model and optimizer every ``--every`` steps."""
    device = torch.device(args.device)
    model = Stack(args.width, args.depth).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-5)
    times, last = [], time.perf_counter()
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    for step, (x,) in enumerate(_loader(args.width, args.steps, args.batch), start=1):
        loss = model.layers(x.to(device)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if folder is not None and step % args.every == 0:
            state = {"state_dict": model.state_dict(), "optimizer": optimizer.state_dict()}
            torch.save(state, folder / f"step{step}.ckpt")
        if device.type == "cuda":
            torch.cuda.synchronize()
        now = time.perf_counter()
        times.append(now - last)
        last = now
    return times[1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a ~64 MB checkpoint instead of ~1 GB")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=None, help="steps per round (default 21; --quick 41)")
    parser.add_argument("--every", type=int, default=5, help="save every this many steps")
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    parser.add_argument("--batch", type=int, default=8, help="batch size: a larger one makes each step longer")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    args.width, args.depth = (1024, 5) if args.quick else (4096, 5)
    args.steps = args.steps or (41 if args.quick else 21)
    params = args.depth * (args.width * args.width + args.width)
    times: dict[str, list[float]] = {"baseline": [], "hand_save": [], "sync": [], "async": []}
    root = Path(tempfile.mkdtemp(prefix="accelplug-async-bench-"))
    try:
        for index in range(args.rounds):
            for mode in ("sync", "async", "baseline", "hand_save"):
                folder = root / f"{mode}{index}"
                started = time.perf_counter()
                if mode in ("baseline", "hand_save"):
                    times[mode] += baseline_round(args, folder if mode == "hand_save" else None)
                else:
                    times[mode] += trainer_round(mode, args, folder)
                saved = sum(f.stat().st_size for f in folder.glob("*.ckpt")) if folder.exists() else 0
                print(f"round {index} {mode:8s} {time.perf_counter() - started:6.1f} s  files {saved / 1e6:8.0f} MB")
                shutil.rmtree(folder, ignore_errors=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    ms = {mode: 1000 * statistics.mean(values) for mode, values in times.items()}
    result = {
        "command": "python benchmarks/async_checkpoint.py"
        + (" --quick" if args.quick else "")
        + (f" --device {args.device}" if args.device != "cpu" else "")
        + (f" --threads {args.threads}" if args.threads else "")
        + (f" --rounds {args.rounds}" if args.rounds != 2 else "")
        + (f" --batch {args.batch}" if args.batch != 8 else "")
        + (f" --every {args.every}" if args.every != 5 else "")
        + (f" --steps {args.steps}" if args.steps != (41 if args.quick else 21) else ""),
        "device": args.device if args.device == "cpu" else torch.cuda.get_device_name(),
        "machine": f"{platform.machine()}, {torch.get_num_threads()} torch threads",
        "checkpoint_mb": round(params * 4 * 3 / 1e6),
        "steps_per_round": args.steps,
        "batch": args.batch,
        "save_every": args.every,
        "rounds": args.rounds,
        "ms_per_step": {mode: round(value, 1) for mode, value in ms.items()},
        "hand_save_over_baseline": round(ms["hand_save"] / ms["baseline"], 2),
        "sync_over_baseline": round(ms["sync"] / ms["baseline"], 2),
        "async_over_baseline": round(ms["async"] / ms["baseline"], 2),
        "sync_over_async": round(ms["sync"] / ms["async"], 2),
    }
    print(json.dumps(result, indent=2))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
