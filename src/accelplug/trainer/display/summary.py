"""What the Trainer tells a person at the start and end of a call: one start-up line, the model summary,
and the results table of ``validate``/``test``. Printed on the global-zero process only, on stderr,
so a script's own stdout stays its own.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from ..run import Run

__all__ = ["announce", "model_summary", "print_results", "startup_line"]


def _count(n: int) -> str:
    for unit, size in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return str(n)


def model_summary(module: torch.nn.Module) -> str:
    """Top-level layers with their parameter counts, then trainable/frozen/total and the size in MB."""
    rows = []
    for name, child in module.named_children():
        params = sum(p.numel() for p in child.parameters())
        rows.append((name, type(child).__name__, _count(params), "train" if child.training else "eval"))
    trainable = sum(p.numel() for p in module.parameters() if p.requires_grad)
    total = sum(p.numel() for p in module.parameters())
    size_mb = sum(p.numel() * p.element_size() for p in module.parameters()) / 1e6
    width = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(("Name", "Type", "Params", "Mode"))]
    lines = []
    if rows:
        header = ("Name", "Type", "Params", "Mode")
        lines.append("  ".join(h.ljust(width[i]) for i, h in enumerate(header)))
        lines.append("  ".join("-" * w for w in width))
        lines += ["  ".join(cell.ljust(width[i]) for i, cell in enumerate(row)) for row in rows]
        lines.append("")
    lines.append(
        f"{_count(trainable)} trainable params, {_count(total - trainable)} non-trainable, {_count(total)} total"
    )
    lines.append(f"{size_mb:.3f} MB of parameters ({type(module).__name__})")
    return "\n".join(lines)


def startup_line(run: Run, reason: str, origins: dict[str, str], log_dir: Any) -> str:
    """One line: accelerator and why, devices, precision, strategy (with where each came from), log folder."""

    def source(key: str) -> str:
        origin = origins.get(key, "argument")
        return "" if origin in ("argument", "built-in default") else f" (from {origin})"

    trainer = run.trainer
    devices = ",".join(str(i) for i in trainer.device_ids)
    return (
        f"accelplug: {trainer.accelerator.name} [{devices}]{source('accelerator')} because {reason}; "
        f"precision {run.precision.name}{source('precision')}; strategy {run.strategy.name}{source('strategy')}"
        f"{'' if trainer.world_size == 1 else f' x{trainer.world_size} processes'}; "
        f"logs in {log_dir}"
    )


def print_results(stage: str, results: list[dict[str, float]]) -> None:
    """The averaged metrics of a validate/test call, one column per dataloader."""
    if not results or not any(results):
        return
    names = sorted({k for r in results for k in r})
    width = max(len(n) for n in names)
    title = f"{stage} results" if len(results) == 1 else f"{stage} results (one column per dataloader)"
    print(title, file=sys.stderr)
    for name in names:
        values = "  ".join(f"{r[name]:>12.6g}" if name in r else " " * 12 for r in results)
        print(f"  {name.ljust(width)}  {values}", file=sys.stderr)


def announce(trainer: Any, run: Run) -> None:
    """The start-up line and model summary (rank 0); the loggers get the hyperparameters from the stages."""
    if not run.chatty:
        return
    print(startup_line(run, trainer.selection.reason, trainer.origins, trainer.log_dir), file=sys.stderr)
    if trainer.options.enable_model_summary:
        print(model_summary(run.module), file=sys.stderr, flush=True)
