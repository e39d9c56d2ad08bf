"""Timing training and evaluation steps the way a careful hand-written loop would.

For each accelerator and model: a fresh model on device 0, synthetic batches made on the device
beforehand (so the input pipeline is not what is measured), ``warmup`` untimed steps (kernel
selection, caching allocator, lazy init), then ``steps`` timed steps between two device
synchronisations, because GPU kernels run asynchronously and a clock read without a synchronize
measures only how fast work was queued. CNNs use channels_last on GPUs; ``bf16-mixed`` runs under
``torch.autocast``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

import torch
from torch import nn

from ..accelerator import Accelerator
from ..errors import MisconfigurationException, did_you_mean
from ..precisions import normalize_precision
from ..registry import get_registry
from .models import Workload, get_workload
from .report import Measurement

__all__ = ["BenchConfig", "ProgressHook", "run_bench", "synchronize"]


class ProgressHook(Protocol):
    """Told when a phase starts and after each step (a counter under a lock: cheap inside the timing)."""

    def start(self, label: str, total: int) -> None: ...

    def advance(self) -> None: ...


class _Silent:
    def start(self, label: str, total: int) -> None:
        pass

    def advance(self) -> None:
        pass


_AUTOCAST_DTYPES = {"bf16-mixed": torch.bfloat16, "16-mixed": torch.float16}
BENCH_PRECISIONS = ("32-true", "bf16-mixed", "16-mixed")


@dataclass(frozen=True)
class BenchConfig:
    """What to run; the CPU gets its own (smaller) step counts because it is orders slower."""

    models: tuple[str, ...]
    accelerators: tuple[str, ...]
    steps: int = 20
    warmup: int = 5
    cpu_steps: int = 3
    cpu_warmup: int = 1
    precision: str = "32-true"
    cpu_precision: str = "32-true"

    def steps_for(self, accelerator: str) -> tuple[int, int]:
        return (self.cpu_warmup, self.cpu_steps) if accelerator == "cpu" else (self.warmup, self.steps)

    def precision_for(self, accelerator: str) -> str:
        return self.cpu_precision if accelerator == "cpu" else self.precision


def synchronize(device: torch.device) -> None:
    """Wait for queued work on ``device``: ``torch.accelerator`` when it drives it, else torch.<type>."""
    if device.type == "cpu":
        return
    neutral = getattr(torch, "accelerator", None)
    if neutral is not None and neutral.is_available():
        current = neutral.current_accelerator()
        if current is not None and current.type == device.type:
            neutral.synchronize(device)
            return
    backend = getattr(torch, device.type, None)
    sync = getattr(backend, "synchronize", None)
    if sync is None:
        raise MisconfigurationException(f"accelplug bench cannot synchronize device type {device.type!r}")
    sync()


def _autocast(device: torch.device, precision: str) -> contextlib.AbstractContextManager[object]:
    dtype = _AUTOCAST_DTYPES.get(precision)
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=dtype)


def _to_device_layout(workload: Workload, model: nn.Module, inputs: object, device: torch.device) -> object:
    if workload.is_cnn and device.type != "cpu" and isinstance(inputs, torch.Tensor):
        model.to(memory_format=torch.channels_last)  # type: ignore[call-overload]  # torch's stub lacks it
        return inputs.contiguous(memory_format=torch.channels_last)
    return inputs


def _timed(device: torch.device, warmup: int, steps: int, step: Callable[[], None], tick: Callable[[], None]) -> float:
    for _ in range(warmup):
        step()
        tick()
    synchronize(device)
    start = time.perf_counter()
    for _ in range(steps):
        step()
    synchronize(device)
    elapsed = time.perf_counter() - start
    for _ in range(steps):  # the progress bar catches up outside the timed region: no host work inside it
        tick()
    return elapsed


def _measure(
    workload: Workload,
    device: torch.device,
    precision: str,
    warmup: int,
    steps: int,
    progress: ProgressHook,
    label: str,
) -> Iterator[tuple[str, float]]:
    torch.manual_seed(0)
    model = workload.build().to(device)
    inputs = _to_device_layout(workload, model, workload.make_inputs(workload.batch_size, device), device)
    labels = torch.randint(0, workload.num_classes, (workload.batch_size,), device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler(device.type, enabled=precision == "16-mixed")

    def train_step() -> None:
        optimizer.zero_grad(set_to_none=True)
        with _autocast(device, precision):
            loss = nn.functional.cross_entropy(workload.forward(model, inputs), labels)
        scaler.scale(loss).backward()  # type: ignore[no-untyped-call]  # torch leaves it unannotated
        scaler.step(optimizer)
        scaler.update()

    def eval_step() -> None:
        with torch.inference_mode(), _autocast(device, precision):
            workload.forward(model, inputs)

    model.train()
    progress.start(f"{label} train", warmup + steps)
    yield "train", _timed(device, warmup, steps, train_step, progress.advance)
    model.eval()
    progress.start(f"{label} eval", warmup + steps)
    yield "eval", _timed(device, warmup, steps, eval_step, progress.advance)


def device_name(cls: type[Accelerator], device: torch.device) -> str:
    """A human name for the device measured (GPU model, CPU model) for tables and charts."""
    if device.type == "cuda":
        return str(torch.cuda.get_device_name(device))
    if device.type in ("cpu", "mps"):  # the Apple GPU is named after its chip
        import platform

        from .host import cpu_model

        return cpu_model() or platform.processor() or platform.machine()
    return f"{cls.name}:{device.index or 0}"


def validate(config: BenchConfig) -> list[type[Accelerator]]:
    """Check every name and precision before anything slow starts; the CPU is always measured last."""
    for name in config.models:
        get_workload(name)
    wanted = normalize_precision(config.precision)  # checked even when no accelerator here would use it
    if wanted not in BENCH_PRECISIONS:
        raise MisconfigurationException(
            f"--precision={config.precision!r} cannot be benchmarked; choose from {', '.join(BENCH_PRECISIONS)}."
        )
    registry = get_registry()
    classes = []
    for name in config.accelerators:
        if name not in registry.names():
            raise MisconfigurationException(
                f"--accelerators: {name!r} is not a registered accelerator. Registered: "
                f"{', '.join(registry.names())}.{did_you_mean(name, registry.names())}"
            )
        cls = registry.get(name)
        reason = cls.unavailable_reason()
        if reason is not None:
            from ..errors import AcceleratorUnavailableError

            raise AcceleratorUnavailableError(cls.name, reason, registry.available())
        precision = normalize_precision(config.precision_for(cls.name))
        if precision not in BENCH_PRECISIONS or precision not in cls.supported_precisions():
            allowed = [p for p in BENCH_PRECISIONS if p in cls.supported_precisions()]
            raise MisconfigurationException(
                f"precision={precision!r} cannot be benchmarked on {cls.name!r}; choose from {', '.join(allowed)}."
            )
        if cls not in classes:
            classes.append(cls)
    return sorted(classes, key=lambda c: c.name == "cpu")


def run_bench(config: BenchConfig, progress: ProgressHook | None = None) -> list[Measurement]:
    """Measure every (accelerator, model, phase); the raw figures, without speed-ups."""
    hook: ProgressHook = progress or _Silent()
    results: list[Measurement] = []
    for cls in validate(config):
        accelerator = cls()
        device = cls.get_device(0)
        accelerator.setup_device(device)
        name = device_name(cls, device)
        warmup, steps = config.steps_for(cls.name)
        precision = normalize_precision(config.precision_for(cls.name))
        try:
            for model_name in config.models:
                workload = get_workload(model_name)
                label = f"{cls.name} {workload.title}"
                for phase, seconds in _measure(workload, device, precision, warmup, steps, hook, label):
                    results.append(
                        Measurement(
                            model=workload.name,
                            accelerator=cls.name,
                            device_name=name,
                            phase="train" if phase == "train" else "eval",
                            precision=precision,
                            batch_size=workload.batch_size,
                            steps=steps,
                            seconds=seconds,
                            throughput=workload.batch_size * steps / seconds,
                            unit=workload.unit,
                        )
                    )
        finally:
            accelerator.teardown()
    return results
