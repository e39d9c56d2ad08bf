"""Where a run's files go, settled and checked before anything is measured.

Every run writes ``bench.json`` (the :class:`~accelplug.bench.report.BenchReport`), ``bench.png``
(the chart) and ``bench.md`` (the tables in Markdown) into one folder: ``--out DIR``, or by default a
new ``accelplug_bench/<date>_<time>/`` in the current folder, so runs never overwrite each other and
a result can be found again. ``--json PATH`` and ``--chart PATH`` put that one file elsewhere.

A path that cannot be written (a directory given for a file, a file given for the folder, no
permission) is a configuration error found by :func:`plan_outputs` before the run, not a traceback
after minutes of measuring. Nothing is created until :meth:`Outputs.create`, which the command calls
once every other option has been checked too, so a refused command leaves no empty folder behind.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import MisconfigurationException

__all__ = ["DEFAULT_ROOT", "Outputs", "plan_outputs"]

#: The folder (relative to the current one) that holds one sub-folder per run by default.
DEFAULT_ROOT = Path("accelplug_bench")


@dataclass(frozen=True)
class Outputs:
    folder: Path
    json: Path
    chart: Path | None  # None: no chart (matplotlib missing, and no --chart asked)
    markdown: Path

    def create(self) -> None:
        """Create the folders the files go into (checked writable by :func:`plan_outputs`)."""
        for path in (self.json, self.markdown, *([self.chart] if self.chart else [])):
            path.parent.mkdir(parents=True, exist_ok=True)


def new_run_folder(root: Path, now: datetime.datetime) -> Path:
    """``root/<date>_<time>``, with ``-2``, ``-3``... when a run of the same second already has it."""
    stamp = now.strftime("%Y-%m-%d_%H-%M-%S")
    folder, n = root / stamp, 1
    while folder.exists():
        n += 1
        folder = root / f"{stamp}-{n}"
    return folder


def _check_folder(folder: Path, option: str) -> None:
    """``folder`` is, or can be created as, a writable folder."""
    existing = folder
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        what = "is a file, not a folder" if existing == folder else f"lies under the file {str(existing)!r}"
        raise MisconfigurationException(f"{option} {str(folder)!r} {what}; name a folder to write into.")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise MisconfigurationException(f"{option} {str(folder)!r}: the folder {str(existing)!r} is not writable.")


def _check_file(path: Path, option: str) -> Path:
    if path.is_dir():
        example = path / ("bench.json" if option == "--json" else "bench.png")
        raise MisconfigurationException(
            f"{option} {str(path)!r} is a directory; give a file name such as {str(example)!r}, "
            f"or --out {str(path)!r} to write every file of the run into that folder."
        )
    if path.exists() and not os.access(path, os.W_OK):
        raise MisconfigurationException(f"{option} {str(path)!r} exists and is not writable.")
    _check_folder(path.parent, option)
    return path


def plan_outputs(
    out: Path | None, json_path: Path | None, chart_path: Path | None, *, draw: bool, now: datetime.datetime
) -> Outputs:
    """The files this run will write, every path checked; nothing is created yet."""
    folder = out if out is not None else new_run_folder(DEFAULT_ROOT, now)
    json_file = _check_file(json_path, "--json") if json_path is not None else None
    chart_file = _check_file(chart_path, "--chart") if chart_path is not None else None
    _check_folder(folder, "--out")
    return Outputs(
        folder=folder,
        json=json_file or folder / "bench.json",
        chart=(chart_file or folder / "bench.png") if draw else None,
        markdown=folder / "bench.md",
    )
