"""What the Trainer tells a person at the start and end of a call: one start-up line (on stderr, so a script's own
stdout stays its own) and the results table of ``validate``/``test`` (the model summary is the ``ModelSummary``
callback's, as in Lightning). Both on the global-zero process only.

The results table is laid out as Lightning lays it out, on stdout: scripts and their tests that read it (``"Test
metric"`` in captured output) move over unchanged, and a person sees the table they know.
"""

from __future__ import annotations

import os
import shutil
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
    """The averaged metrics of a validate/test call: a row per metric, a column per dataloader.

    Lightning's layout: the ``/dataloader_idx_N`` suffix dropped (the column says which loader), metrics sorted,
    values written in full (``str``), columns as wide as the longest name (at least 25, at most half the terminal),
    as many dataloader columns per table as the terminal holds; a rich table when rich is installed, else text
    between rules."""
    results = [{key.split("/dataloader_idx_")[0]: value for key, value in result.items()} for result in results]
    names = sorted({key for result in results for key in result})
    if not names:
        return
    headers = [f"DataLoader {index}" for index in range(len(results))]
    columns = shutil.get_terminal_size(fallback=(120, 30)).columns or 120
    width = int(min(max(len(max(names, key=len)), len(max(headers, key=len)), 25), columns / 2))
    cells = [[_cell(result.get(name)) for result in results] for name in names]
    per_table = max(1, int((columns - width) / width))
    for start in range(0, len(headers), per_table):
        header = [f"{stage} Metric".capitalize(), *headers[start : start + per_table]]
        rows = [[name, *row[start : start + per_table]] for name, row in zip(names, cells, strict=True)]
        if _rich_available():
            _rich_table(header, rows, width)
        else:
            _text_table(header, rows, width, columns)


def _cell(value: Any) -> str:
    if value is None:
        return " "
    if hasattr(value, "item") and hasattr(value, "numel"):  # a tensor, as a metric may still be
        value = value.item() if value.numel() == 1 else value.tolist()
    return str(value)


def _rich_available() -> bool:
    """rich's table where rich is installed; code written for Lightning may switch it off at Lightning's path."""
    from ... import _optional
    from ..._import_paths import seen_at

    return bool(seen_at("accelplug.pytorch.loops.evaluation_loop", "_RICH_AVAILABLE", _optional._RICH_AVAILABLE))


def _rich_table(header: list[str], rows: list[list[str]], width: int) -> None:
    from rich import get_console
    from rich.table import Column, Table

    columns = [Column(title, justify="center", style="magenta", width=width) for title in header]
    columns[0].style = "cyan"
    table = Table(*columns)
    for row in rows:
        table.add_row(*row)
    get_console().print(table)


def _text_table(header: list[str], rows: list[list[str]], width: int, columns: int) -> None:
    """The table without rich: centred cells between rules across the terminal; a name longer than half the
    terminal is wrapped over several lines, its values on the first."""
    cell = f"{{:^{width}}}"
    try:
        "─".encode(sys.stdout.encoding or "utf-8")
        rule = "─" * columns
    except (UnicodeEncodeError, LookupError):
        rule = "-" * columns
    half = int(columns / 2)
    lines = [rule, (cell * len(header)).format(*header).rstrip(), rule]
    for name, *values in rows:
        pieces = [name[i : i + half] for i in range(0, len(name), half)] if len(name) > half else [name]
        for index, piece in enumerate(pieces):
            shown = values if index == 0 else [" "] * len(values)
            lines.append((cell * (1 + len(shown))).format(piece, *shown).rstrip())
    lines.append(rule)
    print(os.linesep.join(lines))


def announce(trainer: Any, run: Run) -> None:
    """The start-up line and model summary (rank 0); the loggers get the hyperparameters from the stages."""
    if not run.chatty:
        return
    print(startup_line(run, trainer.selection.reason, trainer.origins, trainer.log_dir), file=sys.stderr, flush=True)
