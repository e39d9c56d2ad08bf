"""``SimpleProfiler``: how long each action took, on average and in all, in Lightning's table."""

from __future__ import annotations

import math
import os
import time
from collections import defaultdict
from pathlib import Path

from ..errors import MisconfigurationException
from .base import Profiler

__all__ = ["SimpleProfiler"]


class SimpleProfiler(Profiler):
    """Wall-clock durations per action; the report lists the mean and total of each (``extended``: also the
    number of calls and the share of the time since the profiler was made).

    Starting an action already running, or stopping one never started, is a ``ValueError`` (Lightning's), since
    it means two code paths disagree about what is being timed.
    """

    def __init__(self, dirpath: str | Path | None = None, filename: str | None = None, extended: bool = True) -> None:
        super().__init__(dirpath=dirpath, filename=filename)
        if not isinstance(extended, bool):
            raise MisconfigurationException(f"SimpleProfiler(extended={extended!r}): expected True or False.")
        self.current_actions: dict[str, float] = {}
        self.recorded_durations: dict[str, list[float]] = defaultdict(list)
        self.extended = extended
        self.start_time = time.perf_counter()

    def start(self, action_name: str) -> None:
        if action_name in self.current_actions:
            raise ValueError(f"Attempted to start {action_name} which has already started.")
        self.current_actions[action_name] = time.perf_counter()

    def stop(self, action_name: str) -> None:
        now = time.perf_counter()
        started = self.current_actions.pop(action_name, None)
        if started is None:
            raise ValueError(f"Attempting to stop recording an action ({action_name}) which was never started.")
        self.recorded_durations[action_name].append(now - started)

    def _make_report_extended(self) -> tuple[list[tuple[str, float, int, float, float]], int, float]:
        """Rows ``(action, mean, calls, total, percent)``, largest share first; the calls and the time in all."""
        elapsed = time.perf_counter() - self.start_time
        rows = []
        for action, durations in self.recorded_durations.items():
            total = math.fsum(durations)
            rows.append((action, total / len(durations), len(durations), total, 100.0 * total / elapsed))
        rows.sort(key=lambda row: row[4], reverse=True)
        return rows, sum(row[2] for row in rows), elapsed

    def _make_report(self) -> list[tuple[str, float, float]]:
        """Rows ``(action, mean, total)``, longest mean first."""
        rows = []
        for action, durations in self.recorded_durations.items():
            total = math.fsum(durations)
            rows.append((action, total / len(durations), total))
        rows.sort(key=lambda row: row[1], reverse=True)
        return rows

    def summary(self) -> str:
        sep = os.linesep
        text = (f"{self._stage.upper()} " if self._stage is not None else "") + f"Profiler Report{sep}"
        if not self.recorded_durations:
            return text + sep
        width = max(len(action) for action in self.recorded_durations)

        def row(*cells: str) -> str:
            first, rest = cells[0], cells[1:]
            return f"{sep}|  {first:<{width}s}\t|" + "".join(f"  {cell:<15}\t|" for cell in rest)

        if self.extended:
            header = row("Action", "Mean duration (s)", "Num calls", "Total time (s)", "Percentage %")
            rule = f"{sep}{'-' * len(header.expandtabs())}"
            rows, calls, elapsed = self._make_report_extended()
            text += rule + header + rule + row("Total", "-", f"{calls}", f"{elapsed:.5}", "100 %") + rule
            for action, mean, count, total, percent in rows:
                text += row(action, f"{mean:.5}", f"{count}", f"{total:.5}", f"{percent:.5}")
        else:
            header = row("Action", "Mean duration (s)", "Total time (s)")
            rule = f"{sep}{'-' * len(header.expandtabs())}"
            text += rule + header + rule
            for action, mean, total in self._make_report():
                text += row(action, f"{mean:.5}", f"{total:.5}")
        return text + rule + sep
