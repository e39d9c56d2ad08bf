"""The speed-up bar chart, in the manner of the PyTorch MPS launch post's figure.

One group of bars per model; inside it a training and an evaluation bar per accelerator, height =
speed-up over the CPU. Drawn on a bare ``Figure`` with the Agg canvas so no GUI backend or global
pyplot state is touched (it runs on a headless CI machine or inside a notebook alike).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import MisconfigurationException
from .models import WORKLOADS
from .report import BenchReport

__all__ = ["draw_speedups"]


def _series(report: BenchReport) -> tuple[list[str], dict[tuple[str, str], dict[str, float]]]:
    """Models in order, and {(accelerator, phase): {model: speed-up}}; the CPU only if it is alone."""
    models = list(dict.fromkeys(m.model for m in report.results))
    accelerators = list(dict.fromkeys(m.accelerator for m in report.results))
    shown = [a for a in accelerators if a != "cpu"] or ["cpu"]
    series: dict[tuple[str, str], dict[str, float]] = {}
    for m in report.results:
        if m.accelerator in shown and m.speedup_vs_cpu is not None:
            series.setdefault((m.accelerator, m.phase), {})[m.model] = m.speedup_vs_cpu
    return models, series


def draw_speedups(report: BenchReport, path: Path) -> Path:
    """Write the PNG to ``path`` and return it."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MisconfigurationException(
            "--chart needs matplotlib, which is not installed here: pip install 'accelplug[bench]'"
        ) from None
    models, series = _series(report)
    figure = Figure(figsize=(9, 4.8), dpi=120)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    width = min(0.8 / max(len(series), 1), 0.3)
    for i, ((accelerator, phase), values) in enumerate(series.items()):
        xs = [m + (i - (len(series) - 1) / 2) * width for m in range(len(models))]
        heights = [values.get(model, 0.0) for model in models]
        bars = axes.bar(xs, heights, width, label=f"{accelerator} {'training' if phase == 'train' else 'evaluation'}")
        axes.bar_label(bars, labels=[f"{h:.1f}×" if h else "" for h in heights], fontsize=8, padding=2)
    axes.set_xticks(range(len(models)), [WORKLOADS[m].title if m in WORKLOADS else m for m in models])
    axes.set_ylabel("speed-up over CPU (×)")
    cpu = next((m for m in report.results if m.accelerator == "cpu"), None)
    devices = ", ".join(dict.fromkeys(f"{m.accelerator}: {m.device_name}" for m in report.results))
    axes.set_title(
        f"Training and evaluation speed-up over the CPU ({report.settings.precision}"
        f"{'' if cpu is None else ', CPU ' + cpu.precision})\n{devices}",
        fontsize=10,
    )
    axes.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    axes.legend(fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png")
    return path
