"""Per-step overhead of the accelplug Trainer against a hand-written loop and Lightning, in one run.

The three loops train the same model on the same pre-made batches (a Python list, so no data loader
cost is measured), and each repeat runs them in a rotating order so that drift in the machine's speed
is shared. Only the steps are timed: the clock runs from the moment a loop takes its first batch to
the moment it takes its last (after a device synchronisation), so setup and teardown are excluded.

    python benchmarks/overhead.py                      # CPU: MLP 32->32->1, batch 32, 1 thread
    python benchmarks/overhead.py --device cuda        # MLP 64->256->256->10, batch 64, bf16 autocast
    python benchmarks/overhead.py --json overhead.json
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch


class TimedBatches:
    """An iterable over pre-made batches that records when the first is taken and the end is reached."""

    def __init__(self, batches: list[tuple[torch.Tensor, torch.Tensor]], device: torch.device) -> None:
        self.batches = batches
        self.device = device
        self.started = 0.0
        self.finished = 0.0

    def __len__(self) -> int:
        return len(self.batches)

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        last = len(self.batches) - 1
        self.started = time.perf_counter()
        for index, batch in enumerate(self.batches):
            if index == last:  # the steps before this fetch are done (Lightning may never ask past the end)
                if self.device.type == "cuda":
                    torch.cuda.synchronize(self.device)
                self.finished = time.perf_counter()
            yield batch

    @property
    def seconds_per_step(self) -> float:
        """Time between taking the first and the last batch, per step in between."""
        return (self.finished - self.started) / max(1, len(self.batches) - 1)


def make_model(device: torch.device) -> torch.nn.Module:
    torch.manual_seed(0)
    if device.type == "cuda":
        layers = [torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256), torch.nn.ReLU()]
        return torch.nn.Sequential(*layers, torch.nn.Linear(256, 10))
    return torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))


def make_batches(device: torch.device, steps: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    generator = torch.Generator().manual_seed(0)
    if device.type == "cuda":
        xs = torch.randn(steps, 64, 64, generator=generator)
        ys = torch.randint(0, 10, (steps, 64), generator=generator)
    else:
        xs = torch.randn(steps, 32, 32, generator=generator)
        ys = torch.randn(steps, 32, 1, generator=generator)
    return [(xs[i].to(device), ys[i].to(device)) for i in range(steps)]


def loss_fn(device: torch.device) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    if device.type == "cuda":
        return torch.nn.functional.cross_entropy
    return torch.nn.functional.mse_loss


def raw_loop(device: torch.device, data: TimedBatches) -> None:
    model = make_model(device).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    criterion = loss_fn(device)
    if device.type == "cuda":
        for x, y in data:
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        return
    for x, y in data:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()


class ProtocolModule(torch.nn.Module):
    """The same model in the Lightning protocol on a plain nn.Module (what accelplug trains)."""

    def __init__(self, device: torch.device) -> None:
        super().__init__()
        self.model = make_model(device)
        self.criterion = loss_fn(device)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        return self.criterion(self.model(x), y)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.01)


def accelplug_loop(device: torch.device, data: TimedBatches) -> None:
    from accelplug import Trainer

    trainer = Trainer(
        accelerator=device.type,
        devices=1,
        precision="bf16-mixed" if device.type == "cuda" else "32-true",
        max_epochs=1,
        enable_progress_bar=False,
        enable_checkpointing=False,
        logger=False,
    )
    trainer.fit(ProtocolModule(device), data)


def lightning_loop(device: torch.device, data: TimedBatches) -> None:
    import lightning as L

    class LitModule(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.model = make_model(device)
            self.criterion = loss_fn(device)

        def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
            x, y = batch
            return self.criterion(self.model(x), y)

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.01)

    trainer = L.Trainer(
        accelerator="gpu" if device.type == "cuda" else "cpu",
        devices=1,
        precision="bf16-mixed" if device.type == "cuda" else "32-true",
        max_epochs=1,
        logger=False,
        enable_progress_bar=False,
        enable_checkpointing=False,
        enable_model_summary=False,
    )
    trainer.fit(LitModule(), data)


def lightning_available() -> bool:
    try:
        import lightning  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads on the CPU")
    parser.add_argument("--no-lightning", action="store_true", help="skip Lightning even if it is installed")
    parser.add_argument("--json", dest="json_path", default=None, help="also write the figures to this file")
    args = parser.parse_args()

    device = torch.device(args.device)
    torch.set_num_threads(args.threads)
    if device.type == "cuda":
        torch.set_float32_matmul_precision("high")  # the Trainer's default on CUDA, for every loop alike
    warnings.filterwarnings("ignore")
    loops: dict[str, Callable[[torch.device, TimedBatches], None]] = {"raw": raw_loop, "accelplug": accelplug_loop}
    if not args.no_lightning and lightning_available():
        import logging

        logging.getLogger("lightning").setLevel(logging.ERROR)
        logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
        loops["lightning"] = lightning_loop
    batches = make_batches(device, args.steps)
    for run in loops.values():  # warm-up: first-call costs (imports, allocator, autocast caches)
        run(device, TimedBatches(batches[: min(200, args.steps)], device))
    samples: dict[str, list[float]] = {name: [] for name in loops}
    names = list(loops)
    for repeat in range(args.repeats):
        order = names[repeat % len(names) :] + names[: repeat % len(names)]
        for name in order:
            data = TimedBatches(batches, device)
            loops[name](device, data)
            samples[name].append(data.seconds_per_step * 1e6)
    median = {name: statistics.median(values) for name, values in samples.items()}
    report: dict[str, Any] = {
        "device": str(device),
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor(),
        "torch": torch.__version__,
        "steps": args.steps,
        "repeats": args.repeats,
        "threads": args.threads,
        "us_per_step": samples,
        "median_us_per_step": median,
        "overhead_us_vs_raw": {name: median[name] - median["raw"] for name in names},
        "ratio_vs_raw": {name: median[name] / median["raw"] for name in names},
    }
    print(f"{'loop':10} {'median us/step':>15} {'min':>9} {'max':>9} {'vs raw':>9} {'extra us':>9}")
    for name in names:
        values = samples[name]
        print(
            f"{name:10} {median[name]:15.1f} {min(values):9.1f} {max(values):9.1f} "
            f"{report['ratio_vs_raw'][name]:8.3f}x {report['overhead_us_vs_raw'][name]:9.1f}"
        )
    if args.json_path:
        with open(args.json_path, "w") as handle:
            json.dump(report, handle, indent=2)
        print(f"written: {args.json_path}")


if __name__ == "__main__":
    main()
