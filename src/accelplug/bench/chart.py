"""The bar chart, in the manner of the PyTorch MPS launch post's figure.

With an accelerator: one group of bars per model, inside it a training and an evaluation bar per
accelerator, height = speed-up over the CPU (median round), error bars from the least to the most
favourable pairing of rounds. On a CPU-only run there is no speed-up to draw, so the chart shows
throughput instead (samples per second, median round, error bars slowest to fastest round), with
the hand-written loop's bars beside accelplug's when ``--baseline`` ran; a log scale when the models'
throughputs differ by more than 30×, so a small bar stays readable next to a big one.

Drawn on a bare ``Figure`` with the Agg canvas, so no GUI backend or global pyplot state is touched
(it runs on a headless CI machine or inside a notebook alike).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from ..errors import MisconfigurationException
from .models import INSTALL_HINT, WORKLOADS
from .report import BenchReport, Measurement
from .table import number as _number

__all__ = ["chart_available", "draw_chart"]

_PHASE = {"train": "training", "eval": "evaluation"}


def chart_available() -> bool:
    """Whether matplotlib can be imported here (checked before a run, so a missing one is said up front)."""
    return importlib.util.find_spec("matplotlib") is not None


@dataclass(frozen=True)
class _Series:
    label: str
    values: dict[str, tuple[float, float, float]]  # model -> (median, low, high)
    color: str
    hatch: str = ""


def _title(model: str) -> str:
    return WORKLOADS[model].title if model in WORKLOADS else model


def _label(report: BenchReport, model: str, speedups: bool) -> str:
    """The model's name and batch size, and (for throughput, where units differ) what one sample is."""
    batch = next(m.batch_size for m in report.results if m.model == model)
    unit = f", {WORKLOADS[model].unit}/s" if not speedups and model in WORKLOADS else ""
    return f"{_title(model)}\n(batch {batch}{unit})"


def _speedup_series(report: BenchReport) -> list[_Series]:
    series: dict[tuple[str, str], dict[str, tuple[float, float, float]]] = {}
    for m in report.results:
        if m.accelerator == "cpu" or m.speedup_vs_cpu is None:
            continue
        low = m.speedup_min if m.speedup_min is not None else m.speedup_vs_cpu
        high = m.speedup_max if m.speedup_max is not None else m.speedup_vs_cpu
        series.setdefault((m.accelerator, m.phase), {})[m.model] = (m.speedup_vs_cpu, low, high)
    return [
        _Series(f"{accelerator} {_PHASE[phase]}", values, f"C{i}")
        for i, ((accelerator, phase), values) in enumerate(series.items())
    ]


def _throughput_series(report: BenchReport) -> list[_Series]:
    series: list[_Series] = []
    for color, phase in (("C0", "train"), ("C1", "eval")):
        rows: list[Measurement] = [m for m in report.results if m.phase == phase]
        if not rows:
            continue
        series.append(
            _Series(
                f"{_PHASE[phase]} (accelplug Trainer)",
                {m.model: (m.throughput, m.throughput_min, m.throughput_max) for m in rows},
                color,
            )
        )
        hand = {
            m.model: (m.baseline.throughput, m.baseline.throughput_min, m.baseline.throughput_max)
            for m in rows
            if m.baseline is not None
        }
        if hand:
            series.append(_Series(f"{_PHASE[phase]} (hand-written loop)", hand, color, hatch="//"))
    return series


def _subtitle(report: BenchReport) -> str:
    """Devices, then per accelerator its precision and rounds, then what the bars and error bars are."""
    settings = report.settings
    devices = ", ".join(dict.fromkeys(f"{m.accelerator}: {m.device_name}" for m in report.results))
    parts, most = [], 1
    for accelerator in dict.fromkeys(m.accelerator for m in report.results):
        first = next(m for m in report.results if m.accelerator == accelerator)
        rounds = settings.cpu_repeats if accelerator == "cpu" else settings.repeats
        most = max(most, rounds)
        parts.append(f"{accelerator} {first.precision}, {rounds} round{'s' if rounds > 1 else ''}")
    if most == 1:
        spread = "one round each: no error bars"
    elif report.has_speedups:
        spread = "error bars: worst to best pairing of the rounds"
    else:
        spread = "error bars: slowest to fastest round"
    return f"{devices}\n{'; '.join(parts)}; bars: median round, {spread}"


def draw_chart(report: BenchReport, path: Path) -> Path:
    """Write the PNG to ``path`` and return it."""
    if not chart_available():
        raise MisconfigurationException(f"the chart needs matplotlib, which is not installed here: {INSTALL_HINT}")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    speedups = report.has_speedups
    series = _speedup_series(report) if speedups else _throughput_series(report)
    models = list(dict.fromkeys(m.model for m in report.results))
    figure = Figure(figsize=(9, 5.2), dpi=120)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    heights = [v[0] for s in series for v in s.values.values()]
    log = not speedups and len(heights) > 1 and max(heights) > 30 * min(heights)
    width = min(0.8 / max(len(series), 1), 0.3)
    for i, s in enumerate(series):
        offset = (i - (len(series) - 1) / 2) * width
        xs = [index + offset for index, model in enumerate(models) if model in s.values]
        values = [s.values[model] for model in models if model in s.values]
        mids = [v[0] for v in values]
        errors = [[v[0] - v[1] for v in values], [v[2] - v[0] for v in values]]
        axes.bar(
            xs,
            mids,
            width,
            yerr=errors,
            capsize=3,
            label=s.label,
            color=s.color,
            alpha=0.55 if s.hatch else 1.0,
            hatch=s.hatch,
            edgecolor="black",
            linewidth=0.4,
        )
        for x, (mid, _, high) in zip(xs, values, strict=True):
            text = f"{_number(mid)}×" if speedups else _number(mid)
            axes.annotate(
                text, (x, high), xytext=(0, 3), textcoords="offset points", ha="center", va="bottom", fontsize=7
            )
    labels = [_label(report, m, speedups) for m in models]
    axes.set_xticks(range(len(models)), labels)
    axes.set_xlim(-0.75, len(models) - 0.25)  # a lone model's bars keep a readable width
    if speedups:
        axes.set_ylabel("speed-up over the CPU (×, higher is better)")
        axes.set_title(
            "accelplug bench: training and evaluation speed-up over the CPU\n" + _subtitle(report), fontsize=9
        )
        axes.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    else:
        axes.set_ylabel("throughput (samples/s, higher is better)" + (", log scale" if log else ""))
        axes.set_title(
            f"accelplug bench: CPU throughput ({(report.note or 'no accelerator measured').split(';')[0]}, "
            "so no speed-up)\n" + _subtitle(report),
            fontsize=9,
        )
    if log:
        axes.set_yscale("log")
    axes.margins(y=0.12)
    axes.legend(fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png")
    return path
