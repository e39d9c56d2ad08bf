"""``accelplug bench``: parse options, show progress, print the table, write JSON and the chart.

The measuring is :mod:`accelplug.bench`; this module only turns options into a ``BenchConfig`` and
results into output, so the engine stays usable from Python and from the GPU benchmark script.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import MisconfigurationException

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from ..bench.report import BenchReport


class _RichProgress:
    """Adapts ``rich.progress`` to the engine's ``ProgressHook``: one bar per measured phase."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task: TaskID | None = None

    def start(self, label: str, total: int) -> None:
        if self.task is not None:
            self.progress.update(self.task, visible=False)
        self.task = self.progress.add_task(label, total=total)

    def advance(self) -> None:
        if self.task is not None:
            self.progress.advance(self.task)


def _split(text: str | None) -> tuple[str, ...]:
    return tuple(p.strip().lower() for p in (text or "").split(",") if p.strip())


def _print_table(report: BenchReport) -> None:
    """One row per measurement; what is shared by many rows (devices, precision, steps) goes in the caption."""
    from rich.console import Console
    from rich.table import Table

    from ..bench.models import WORKLOADS

    settings = report.settings
    devices = "; ".join(dict.fromkeys(f"{m.accelerator} = {m.device_name}" for m in report.results))
    caption = (
        f"{devices}. Precision {settings.precision} (CPU {settings.cpu_precision}); timed steps "
        f"{settings.steps} after {settings.warmup} warmup (CPU {settings.cpu_steps} after {settings.cpu_warmup}); "
        f"CPU threads {settings.cpu_threads}."
    )
    table = Table(title="accelplug bench: throughput and speed-up over the CPU", caption=caption)
    table.add_column("model")
    table.add_column("accelerator")
    table.add_column("phase")
    for column in ("batch", "ms/step", "samples/s", "speed-up"):
        table.add_column(column, justify="right")
    for m in report.results:
        table.add_row(
            WORKLOADS[m.model].title,
            m.accelerator,
            m.phase,
            str(m.batch_size),
            f"{m.ms_per_step:.1f}",
            f"{m.throughput:.1f}",
            "-" if m.speedup_vs_cpu is None else f"{m.speedup_vs_cpu:.2f}×",
        )
    Console().print(table)


def bench(
    models: Annotated[
        str | None,
        typer.Option(
            help="Models: resnet50, bert, vgg16, tinycnn (default: resnet50,bert,vgg16; with --quick: tinycnn)."
        ),
    ] = None,
    accelerators: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated accelerators (default: every available one). The CPU is always measured too."
        ),
    ] = None,
    steps: Annotated[int, typer.Option(min=1, help="Timed steps per phase on an accelerator.")] = 20,
    warmup: Annotated[int, typer.Option(min=0, help="Untimed steps first, on an accelerator.")] = 5,
    cpu_steps: Annotated[
        int | None,
        typer.Option(
            min=1, help="Timed steps on the CPU, slow so keep it small (default: 3; with --quick: same as --steps)."
        ),
    ] = None,
    cpu_warmup: Annotated[int, typer.Option(min=0, help="Untimed steps first, on the CPU.")] = 1,
    precision: Annotated[
        str, typer.Option(help="32-true, bf16-mixed (autocast) or 16-mixed, on accelerators.")
    ] = "32-true",
    cpu_precision: Annotated[str, typer.Option(help="Precision of the CPU baseline.")] = "32-true",
    quick: Annotated[
        bool, typer.Option("--quick", help="A tiny built-in CNN: seconds on a laptop, needs nothing extra.")
    ] = False,
    json_path: Annotated[Path | None, typer.Option("--json", help="Write the results (BenchReport JSON) here.")] = None,
    chart: Annotated[Path | None, typer.Option(help="Write a PNG bar chart of the speed-ups here.")] = None,
) -> None:
    """Measure training and evaluation throughput per model on each accelerator and the CPU.

    The experiment of the PyTorch MPS launch post (ResNet50 bs128, BERT-base bs64 seq128, VGG16 bs64,
    random weights, synthetic data made on the device), on whatever this machine has.
    """
    import datetime
    import platform

    import torch
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .. import __version__
    from ..bench import BenchConfig, BenchReport, run_bench
    from ..bench.models import DEFAULT_MODELS, QUICK_MODELS
    from ..bench.report import BenchSettings, with_speedups
    from ..bench.runner import validate
    from ..registry import get_registry

    chosen_models = _split(models) or (QUICK_MODELS if quick else DEFAULT_MODELS)
    chosen = _split(accelerators) or tuple(get_registry().available())
    if "cpu" not in chosen:
        chosen = (*chosen, "cpu")
    config = BenchConfig(
        models=chosen_models,
        accelerators=chosen,
        steps=steps,
        warmup=warmup,
        cpu_steps=cpu_steps if cpu_steps is not None else (steps if quick else 3),
        cpu_warmup=cpu_warmup,
        precision=precision,
        cpu_precision=cpu_precision,
    )
    validate(config)  # every name and precision checked before the progress display starts
    for option, path in (("--json", json_path), ("--chart", chart)):
        _check_output(option, path)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True, refresh_per_second=4) as progress:
        results = run_bench(config, _RichProgress(progress))
    report = BenchReport(
        accelplug=__version__,
        torch=torch.__version__,
        created_utc=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        platform=platform.platform(),
        settings=BenchSettings(
            models=list(config.models),
            accelerators=list(config.accelerators),
            steps=config.steps,
            warmup=config.warmup,
            cpu_steps=config.cpu_steps,
            cpu_warmup=config.cpu_warmup,
            precision=results[0].precision if results else precision,
            cpu_precision=config.cpu_precision,
            cpu_threads=torch.get_num_threads(),
        ),
        results=with_speedups(results),
    )
    _print_table(report)
    if json_path is not None:
        try:
            json_path.parent.mkdir(parents=True, exist_ok=True)
            json_path.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            shown = str(json_path)
            raise MisconfigurationException(f"--json={shown!r} could not be written: {exc.strerror}.") from None
        typer.echo(f"wrote {json_path}")
    if chart is not None:
        from ..bench.chart import draw_speedups

        typer.echo(f"wrote {draw_speedups(report, chart)}")


def _check_output(option: str, path: Path | None) -> None:
    """Refuse an output path that cannot be a file before the (long) measurement, not after it."""
    if path is None:
        return
    if path.is_dir():
        example = path / ("bench.json" if option == "--json" else "bench.png")
        raise MisconfigurationException(f"{option}={str(path)!r} is a folder; give a file path, e.g. {example}.")
    parent = next((p for p in path.parents if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise MisconfigurationException(f"{option}={str(path)!r}: {parent} is not a folder.")


def register(app: typer.Typer) -> None:
    app.command("bench")(bench)
