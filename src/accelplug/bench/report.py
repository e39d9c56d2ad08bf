"""The result of a benchmark run, as written to ``bench.json``.

Every figure is derived here, in one place, from the raw timings: each round's seconds for
``steps`` timed steps, so anyone can recompute a throughput as ``batch_size * steps / seconds``.
A measurement's ``throughput`` is the one of its median round; ``throughput_min``/``throughput_max``
are its slowest and fastest rounds (the spread the table prints and the chart draws as error bars).
Speed-ups divide an accelerator's throughput by the CPU's for the same model and phase; their range
puts the accelerator's slowest round over the CPU's fastest and the other way round, so it is wide
enough to hold both spreads. With ``--baseline``, ``baseline`` holds the hand-written loop's rounds,
run interleaved with the Trainer's; ``ratio_to_baseline`` is accelplug's median throughput over the
hand-written median, and ``ratio_min``/``ratio_max`` the extremes of the round-by-round ratios
(round *i* of one loop against round *i* of the other, which ran next to it).
"""

from __future__ import annotations

import statistics
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "SCHEMA",
    "BenchReport",
    "BenchSettings",
    "LoopFigures",
    "Measurement",
    "figures",
    "paired_ratios",
    "with_speedups",
]

#: Version of this JSON shape; 2 added rounds, spread, the baseline and the CPU-only note.
SCHEMA = 2


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LoopFigures(_Model):
    """One loop's rounds for one model, accelerator and phase."""

    rounds: list[float] = Field(min_length=1, description="seconds of the timed steps, one entry per round")
    seconds: float = Field(gt=0, description="median of rounds")
    throughput: float = Field(gt=0, description="samples per second at the median round")
    throughput_min: float = Field(gt=0, description="samples per second of the slowest round")
    throughput_max: float = Field(gt=0, description="samples per second of the fastest round")
    steps_seen: list[int] = Field(description="steps the timing callback counted in each round (warmup + steps)")


def figures(rounds: list[float], samples: int, steps_seen: list[int]) -> LoopFigures:
    """Median and spread of ``rounds`` (seconds), each round having processed ``samples`` timed samples."""
    seconds = statistics.median(rounds)
    return LoopFigures(
        rounds=rounds,
        seconds=seconds,
        throughput=samples / seconds,
        throughput_min=samples / max(rounds),
        throughput_max=samples / min(rounds),
        steps_seen=steps_seen,
    )


class Measurement(_Model):
    model: str
    accelerator: str
    device_name: str
    phase: Literal["train", "eval"]
    measured_with: str = Field(description="the Trainer method timed: fit (train) or validate (eval)")
    precision: str
    batch_size: int
    warmup: int
    steps: int = Field(gt=0)
    seconds: float = Field(gt=0, description="median round: wall time of the timed steps, device synchronised")
    throughput: float = Field(gt=0, description="samples per second at the median round")
    throughput_min: float = Field(gt=0)
    throughput_max: float = Field(gt=0)
    rounds: list[float] = Field(min_length=1, description="seconds of each round, in the order they ran")
    steps_seen: list[int]
    unit: str
    speedup_vs_cpu: float | None = Field(default=None, description="throughput / the CPU's for this model and phase")
    speedup_min: float | None = None
    speedup_max: float | None = None
    baseline: LoopFigures | None = Field(default=None, description="the hand-written loop, with --baseline")
    ratio_to_baseline: float | None = Field(default=None, description="throughput / the hand-written loop's")
    ratio_min: float | None = Field(default=None, description="lowest of the per-round ratios (rounds paired in order)")
    ratio_max: float | None = None

    @property
    def ms_per_step(self) -> float:
        return 1000.0 * self.seconds / self.steps


class BenchSettings(_Model):
    models: list[str]
    accelerators: list[str]
    steps: int
    warmup: int
    repeats: int
    cpu_steps: int
    cpu_warmup: int
    cpu_repeats: int
    precision: str
    cpu_precision: str
    cpu_threads: int
    baseline: bool
    cpu_baseline: bool


class BenchReport(_Model):
    schema_version: int = SCHEMA
    accelplug: str
    torch: str
    created_utc: str
    platform: str
    command: str
    settings: BenchSettings
    note: str | None = Field(default=None, description="what the figures cannot say (no accelerator here, ...)")
    results: list[Measurement]

    @property
    def has_speedups(self) -> bool:
        return any(m.accelerator != "cpu" and m.speedup_vs_cpu is not None for m in self.results)


def paired_ratios(ours: list[float], theirs: list[float]) -> list[float]:
    """Throughput ratios round by round: the other loop's seconds over ours (above 1: ours is faster)."""
    return [t / o for o, t in zip(ours, theirs, strict=True)]


def with_speedups(results: list[Measurement]) -> list[Measurement]:
    """Fill the speed-ups of every non-CPU measurement whose model and phase the CPU also measured.

    The CPU's own rows get none: its speed-up over itself is 1 by definition and says nothing.
    """
    cpu = {(m.model, m.phase): m for m in results if m.accelerator == "cpu"}
    out = []
    for m in results:
        base = cpu.get((m.model, m.phase))
        if base is None or m.accelerator == "cpu":
            out.append(m)
            continue
        out.append(
            m.model_copy(
                update={
                    "speedup_vs_cpu": m.throughput / base.throughput,
                    "speedup_min": m.throughput_min / base.throughput_max,
                    "speedup_max": m.throughput_max / base.throughput_min,
                }
            )
        )
    return out
