"""What the Trainer tells a person at the start and end of a call: one start-up line and the results table of
``validate``/``test`` (the model summary is the ``ModelSummary`` callback's, as in Lightning). Printed on the
global-zero process only, on stderr, so a script's own stdout stays its own.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._run import Run

__all__ = ["announce", "print_results", "startup_line"]


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
    print(startup_line(run, trainer.selection.reason, trainer.origins, trainer.log_dir), file=sys.stderr, flush=True)
