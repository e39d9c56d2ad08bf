"""The result of a benchmark run, as written by ``accelplug bench --json``.

Speed-ups are derived here, in one place, from the raw throughputs: for each model and phase, an
accelerator's samples per second divided by the CPU's. Keeping the raw seconds and step counts lets
anyone recompute every figure.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["BenchReport", "BenchSettings", "Measurement", "with_speedups"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Measurement(_Model):
    model: str
    accelerator: str
    device_name: str
    phase: Literal["train", "eval"]
    precision: str
    batch_size: int
    steps: int = Field(gt=0)
    seconds: float = Field(gt=0, description="wall time of the timed steps, after warmup, device synchronised")
    throughput: float = Field(gt=0, description="samples per second")
    unit: str
    speedup_vs_cpu: float | None = Field(default=None, description="throughput / the CPU's for this model and phase")

    @property
    def ms_per_step(self) -> float:
        return 1000.0 * self.seconds / self.steps


class BenchSettings(_Model):
    models: list[str]
    accelerators: list[str]
    steps: int
    warmup: int
    cpu_steps: int
    cpu_warmup: int
    precision: str
    cpu_precision: str
    cpu_threads: int


class BenchReport(_Model):
    accelplug: str
    torch: str
    created_utc: str
    platform: str
    settings: BenchSettings
    results: list[Measurement]


def with_speedups(results: list[Measurement]) -> list[Measurement]:
    """Fill ``speedup_vs_cpu`` wherever the CPU measured the same model and phase."""
    cpu = {(m.model, m.phase): m.throughput for m in results if m.accelerator == "cpu"}
    out = []
    for m in results:
        base = cpu.get((m.model, m.phase))
        out.append(m.model_copy(update={"speedup_vs_cpu": m.throughput / base if base else None}))
    return out
