"""Running the benchmark: every accelerator, model and phase, in rounds, through the Trainer.

For each accelerator (the CPU last, as the baseline of the speed-ups) and model: a fresh model with
random weights and one batch made on device 0, then for training and for evaluation ``repeats``
rounds. A round is one ``Trainer.fit`` or ``Trainer.validate`` of ``warmup + steps`` steps timed by a
:class:`~accelplug.bench.timing.StepTimer`; with ``baseline`` also one hand-written loop over the same
model and batch, the two in alternating order (accelplug first in even rounds, the hand-written loop
first in odd ones) so that drift during the run (clocks, other tenants of a shared machine) does not
favour either. Every option is checked by :func:`validate` before anything slow starts.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass
from typing import Protocol

import torch

from ..accelerator import Accelerator
from ..errors import AcceleratorUnavailableError, MisconfigurationException, did_you_mean
from ..registry import get_registry
from .loops import BASELINE_PRECISIONS, BenchModule, Phase, baseline_round, make_batch, trainer_round
from .models import Workload, check_installed, get_workload
from .report import Measurement, figures, paired_ratios
from .timing import StepWindow

__all__ = ["BenchConfig", "ProgressHook", "Target", "run_bench", "total_steps", "validate"]

PHASES: tuple[Phase, ...] = ("train", "eval")


class ProgressHook(Protocol):
    """Told the total once, what runs now, and after every step (cheap: it runs inside the timed window)."""

    def start(self, total: int) -> None: ...

    def describe(self, label: str) -> None: ...

    def advance(self) -> None: ...


class _Silent:
    def start(self, total: int) -> None:
        pass

    def describe(self, label: str) -> None:
        pass

    def advance(self) -> None:
        pass


@dataclass(frozen=True)
class BenchConfig:
    """What to run; the CPU gets its own (smaller) counts because it is orders of magnitude slower."""

    models: tuple[str, ...]
    accelerators: tuple[str, ...]
    steps: int = 20
    warmup: int = 5
    repeats: int = 3
    cpu_steps: int = 3
    cpu_warmup: int = 1
    cpu_repeats: int = 3
    precision: str = "32-true"
    cpu_precision: str = "32-true"
    baseline: bool = False
    #: The hand-written loop on the CPU too (None: as ``baseline``); off keeps a GPU run short.
    cpu_baseline: bool | None = None

    def baseline_for(self, accelerator: str) -> bool:
        if accelerator == "cpu" and self.cpu_baseline is not None:
            return self.cpu_baseline
        return self.baseline

    def counts_for(self, accelerator: str) -> tuple[int, int, int]:
        """(warmup, steps, repeats) on this accelerator."""
        if accelerator == "cpu":
            return self.cpu_warmup, self.cpu_steps, self.cpu_repeats
        return self.warmup, self.steps, self.repeats

    def precision_for(self, accelerator: str) -> str:
        return self.cpu_precision if accelerator == "cpu" else self.precision


@dataclass(frozen=True)
class Target:
    """One accelerator to measure, with the precision the selection rules accepted for it."""

    cls: type[Accelerator]
    precision: str


def _accelerator(name: str) -> type[Accelerator]:
    registry = get_registry()
    if name not in registry.names():
        raise MisconfigurationException(
            f"--accelerators: {name!r} is not a registered accelerator. Registered: "
            f"{', '.join(registry.names())}.{did_you_mean(name, registry.names())}"
        )
    cls = registry.get(name)
    reason = registry.status(cls).reason  # asked in isolation: a hanging plugin cannot hang the benchmark
    if reason is not None:
        raise AcceleratorUnavailableError(cls.name, reason, registry.available())
    return cls


def validate(config: BenchConfig) -> list[Target]:
    """Check every name, precision and installed package before anything slow starts; the CPU comes last.

    Precisions go through :func:`accelplug.selection.select`, the Trainer's own check, so the names
    and aliases accepted (and refused, with the accepted list) are exactly the Trainer's, plugin
    precisions included, and only those the accelerator supports.
    """
    from ..precision.names import normalize_precision
    from ..selection import select

    aliases = get_registry().precision_aliases()
    for option, value in (("--precision", config.precision), ("--cpu-precision", config.cpu_precision)):
        try:  # both names are checked even when no accelerator uses --precision: a typo is a typo
            normalize_precision(value, aliases)
        except MisconfigurationException as exc:
            raise MisconfigurationException(f"{option}: {exc}") from None
    for name in config.models:
        get_workload(name)
    check_installed(config.models)
    targets: list[Target] = []
    for name in dict.fromkeys(config.accelerators):
        cls = _accelerator(name)
        option = "--cpu-precision" if cls.name == "cpu" else "--precision"
        try:
            precision = select(cls.name, 1, "auto", config.precision_for(cls.name)).precision
        except MisconfigurationException as exc:
            raise MisconfigurationException(f"{option}: {exc}") from None
        if config.baseline_for(cls.name) and precision not in BASELINE_PRECISIONS:
            raise MisconfigurationException(
                f"--baseline: the hand-written loop knows torch's own precisions "
                f"({', '.join(BASELINE_PRECISIONS)}), not {precision!r}; run without --baseline."
            )
        if all(t.cls is not cls for t in targets):
            targets.append(Target(cls, precision))
    return sorted(targets, key=lambda t: t.cls.name == "cpu")


def total_steps(config: BenchConfig, targets: list[Target]) -> int:
    """Every step the run will take (warm-up included), for a progress bar that advances per step."""
    total = 0
    for target in targets:
        warmup, steps, repeats = config.counts_for(target.cls.name)
        loops = 2 if config.baseline_for(target.cls.name) else 1
        total += len(config.models) * len(PHASES) * repeats * loops * (warmup + steps)
    return total


def device_name(cls: type[Accelerator], device: torch.device) -> str:
    """A human name for the device measured (GPU model, CPU model) for tables and charts."""
    if device.type == "cuda":
        return str(torch.cuda.get_device_name(device))
    if device.type in ("cpu", "mps"):  # the Apple GPU is named after its chip
        import platform

        from .host import cpu_model

        return cpu_model() or platform.processor() or platform.machine()
    return f"{cls.name}:{device.index or 0}"


def _param_dtype(precision: str, device: torch.device) -> torch.dtype | None:
    dtype: torch.dtype | None = get_registry().get_precision(precision)(device.type).param_dtype
    return dtype


def _prepare(workload: Workload, device: torch.device, precision: str) -> tuple[BenchModule, object]:
    """The model on the device in the precision's dtype (channels_last for CNNs on GPUs), and its batch."""
    torch.manual_seed(0)
    model = workload.build()
    dtype = _param_dtype(precision, device)
    if workload.is_cnn and device.type != "cpu":
        model.to(memory_format=torch.channels_last)  # type: ignore[call-overload]  # torch's stub lacks it
    model.to(device=device, dtype=dtype)
    return BenchModule(workload, model), make_batch(workload, device, dtype)


def _phase(
    config: BenchConfig,
    target: Target,
    workload: Workload,
    phase: Phase,
    prepared: tuple[BenchModule, object],
    progress: ProgressHook,
) -> Measurement:
    """Every round of one phase of one model on one accelerator: the Trainer (and the hand-written loop)."""
    name = target.cls.name
    device = target.cls.get_device(0)
    warmup, steps, repeats = config.counts_for(name)
    loops = ["accelplug", "baseline"] if config.baseline_for(name) else ["accelplug"]
    module, batch = prepared
    seconds: dict[str, list[float]] = {loop: [] for loop in loops}
    seen: dict[str, list[int]] = {loop: [] for loop in loops}
    for index in range(repeats):
        for loop in loops if index % 2 == 0 else loops[::-1]:  # alternate who goes first
            hand_written = " (hand-written)" if loop == "baseline" else ""
            progress.describe(f"{name} {workload.title} {phase} round {index + 1}/{repeats}{hand_written}")
            window = StepWindow(device, warmup, steps, progress.advance)
            if loop == "accelplug":
                trainer_round(phase, module, batch, name, target.precision, window)
            else:
                baseline_round(phase, module, batch, target.precision, window)
            seconds[loop].append(window.seconds)
            seen[loop].append(window.seen)
    samples = workload.batch_size * steps
    ours = figures(seconds["accelplug"], samples, seen["accelplug"])
    hand = figures(seconds["baseline"], samples, seen["baseline"]) if "baseline" in seconds else None
    paired = paired_ratios(seconds["accelplug"], seconds["baseline"]) if hand is not None else []
    return Measurement(
        model=workload.name,
        accelerator=name,
        device_name=device_name(target.cls, device),
        phase=phase,
        measured_with="Trainer.fit" if phase == "train" else "Trainer.validate",
        precision=target.precision,
        batch_size=workload.batch_size,
        warmup=warmup,
        steps=steps,
        seconds=ours.seconds,
        throughput=ours.throughput,
        throughput_min=ours.throughput_min,
        throughput_max=ours.throughput_max,
        rounds=ours.rounds,
        steps_seen=ours.steps_seen,
        unit=workload.unit,
        baseline=hand,
        ratio_to_baseline=None if hand is None else ours.throughput / hand.throughput,
        ratio_min=min(paired, default=None),
        ratio_max=max(paired, default=None),
    )


def run_bench(config: BenchConfig, progress: ProgressHook | None = None) -> list[Measurement]:
    """Measure every (accelerator, model, phase); raw figures with their spread, without speed-ups."""
    hook: ProgressHook = progress or _Silent()
    targets = validate(config)
    hook.start(total_steps(config, targets))
    results: list[Measurement] = []
    for target in targets:
        device = target.cls.get_device(0)
        for model_name in config.models:
            workload = get_workload(model_name)
            prepared = _prepare(workload, device, target.precision)
            results += [_phase(config, target, workload, phase, prepared, hook) for phase in PHASES]
            del prepared
            _release(device)
    return results


def _release(device: torch.device) -> None:
    """Give a finished model's memory back before the next one is built (big models, one GPU)."""
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
