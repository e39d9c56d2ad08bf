"""The results table, as cells: printed by the CLI with rich and written to ``bench.md`` as Markdown.

Columns appear only where they say something: the speed-up only when an accelerator was measured
next to the CPU (on a CPU-only run it would be 1.00× by definition), the hand-written loop and the
ratio only with ``--baseline``. Every median carries its spread, slowest to fastest round: on a
second line in the terminal (so the table fits 80 columns), in brackets in Markdown.
"""

from __future__ import annotations

from dataclasses import dataclass

from .models import WORKLOADS
from .report import BenchReport, LoopFigures, Measurement

__all__ = ["Cell", "Table", "cpu_only_note", "markdown", "number", "tables"]


@dataclass(frozen=True)
class Cell:
    value: str
    spread: str = ""  # "low–high", or empty

    def one_line(self) -> str:
        return f"{self.value} ({self.spread})" if self.spread else self.value

    def two_lines(self) -> str:
        return f"{self.value}\n{self.spread}" if self.spread else self.value


@dataclass(frozen=True)
class Table:
    title: str
    headers: list[str]
    right_aligned: list[bool]
    rows: list[list[Cell]]
    caption: str


def number(value: float) -> str:
    """Three significant figures at most above 100 (the spread between rounds is wider than that anyway)."""
    if value >= 100:
        return f"{value:.0f}"
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def _spread(low: float | None, high: float | None, suffix: str = "") -> str:
    """ "low–high", or nothing when there is no spread to show (one round)."""
    if low is None or high is None or number(low) == number(high):
        return ""
    return f"{number(low)}–{number(high)}{suffix}"


def cpu_only_note(available: list[str]) -> str:
    """What a run without an accelerator can and cannot say."""
    accelerators = [a for a in available if a != "cpu"]
    if not accelerators:
        return "no accelerator here; CPU throughput only"
    return f"no accelerator measured (available here: {', '.join(accelerators)}); CPU throughput only"


def _throughput(m: Measurement | LoopFigures) -> Cell:
    return Cell(number(m.throughput), _spread(m.throughput_min, m.throughput_max))


def _speedup(m: Measurement) -> Cell:
    if m.accelerator == "cpu":
        return Cell("(ref.)")
    if m.speedup_vs_cpu is None:
        return Cell("-")
    return Cell(f"{number(m.speedup_vs_cpu)}×", _spread(m.speedup_min, m.speedup_max, "×"))


def _ratio(m: Measurement) -> Cell:
    if m.ratio_to_baseline is None or m.ratio_min is None or m.ratio_max is None:
        return Cell("-")
    spread = f"{m.ratio_min:.2f}–{m.ratio_max:.2f}" if m.ratio_min != m.ratio_max else ""
    return Cell(f"{m.ratio_to_baseline:.3f}", spread)


def _title_cell(m: Measurement) -> Cell:
    return Cell(WORKLOADS[m.model].title if m.model in WORKLOADS else m.model, f"bs {m.batch_size}")


def _caption(report: BenchReport) -> str:
    settings = report.settings
    devices = "; ".join(dict.fromkeys(f"{m.accelerator} = {m.device_name}" for m in report.results))
    counts = []
    for accelerator in dict.fromkeys(m.accelerator for m in report.results):
        first = next(m for m in report.results if m.accelerator == accelerator)
        repeats = settings.cpu_repeats if accelerator == "cpu" else settings.repeats
        counts.append(f"{accelerator}: {first.precision}, {first.steps} timed steps after {first.warmup} warm-up, "
                      f"{repeats} round{'s' if repeats > 1 else ''}")  # fmt: skip
    caption = (
        f"{devices}. {'; '.join(counts)}. Median round, below it the slowest–fastest round. Timed inside "
        f"Trainer.fit (train) and Trainer.validate (eval); CPU threads {settings.cpu_threads}."
    )
    if report.note:
        caption = f"{report.note[0].upper()}{report.note[1:]}. {caption}"
    return caption


def tables(report: BenchReport) -> list[Table]:
    """The throughput table (with the speed-ups when there are any), then, with ``--baseline``, the
    Trainer against the hand-written loop: two narrow tables rather than one too wide for a terminal."""
    speedups = report.has_speedups
    headers = ["model", "device", "phase", "ms/step", "samples/s"] + (["speed-up\nover CPU"] if speedups else [])
    rows = []
    for m in report.results:
        row = [_title_cell(m), Cell(m.accelerator), Cell(m.phase), Cell(f"{m.ms_per_step:.1f}"), _throughput(m)]
        if speedups:
            row.append(_speedup(m))
        rows.append(row)
    title = "accelplug bench: " + ("throughput and speed-up over the CPU" if speedups else "CPU throughput")
    found = [Table(title, headers, [False] * 3 + [True] * (len(headers) - 3), rows, _caption(report))]
    compared = [m for m in report.results if m.baseline is not None]
    if compared:
        headers = [
            "model",
            "device",
            "phase",
            "accelplug\nsamples/s",
            "hand-written\nsamples/s",
            "accelplug /\nhand-written",
        ]
        rows = [
            [_title_cell(m), Cell(m.accelerator), Cell(m.phase), _throughput(m), _throughput(m.baseline), _ratio(m)]
            for m in compared
            if m.baseline is not None
        ]
        caption = (
            "The same model, data and precision in the same process, the two loops alternating round by round; "
            "ratio of the medians, below it the lowest and highest ratio of paired rounds (above 1: accelplug faster)."
        )
        found.append(
            Table("accelplug Trainer against a hand-written loop", headers, [False] * 3 + [True] * 3, rows, caption)
        )
    return found


def _markdown_header(header: str) -> str:
    return header.replace("-\n", "-").replace("\n", " ")


def markdown(report: BenchReport) -> str:
    """The tables as a Markdown page, with the command that produced them."""
    lines = [f"`{report.command}`", ""]
    for t in tables(report):
        lines += [f"## {t.title}", ""]
        lines.append("| " + " | ".join(_markdown_header(h) for h in t.headers) + " |")
        lines.append("|" + "|".join("---:" if right else "---" for right in t.right_aligned) + "|")
        lines += ["| " + " | ".join(cell.one_line() for cell in row) + " |" for row in t.rows]
        lines += ["", t.caption.replace("below it the", "in brackets the"), ""]
    lines += [f"accelplug {report.accelplug}, torch {report.torch}, {report.platform}, {report.created_utc}.", ""]
    return "\n".join(lines)
