"""``accelplug bench``: parse options, check everything, show progress, print the table, write the files.

The measuring is :mod:`accelplug.bench`; this module turns options into a ``BenchConfig``, checks
names, precisions, installed packages and output paths before the first step (a mistake costs a
second, not a run), and turns results into the table, ``bench.json``, ``bench.png`` and ``bench.md``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import MisconfigurationException

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from ..bench.report import BenchReport


class _RichProgress:
    """One bar for the whole run on a terminal, advanced after every step (warm-up, timed, both loops).

    ``advance`` only bumps rich's counter under its lock; drawing happens in rich's refresh thread,
    twice a second (a redraw costs about 2 ms of the GIL on the 2-core CI box, so ~0.5% of the run), and
    both loops pay the same. Not on a terminal, no thread runs at all.
    """

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task: TaskID | None = None

    def start(self, total: int) -> None:
        self.task = self.progress.add_task("starting", total=total)

    def describe(self, label: str) -> None:
        if self.task is not None:
            self.progress.update(self.task, description=label)

    def advance(self) -> None:
        if self.task is not None:
            self.progress.advance(self.task)


class _PlainProgress:
    """Not a terminal (CI logs, a file): one line per round, written before the round starts."""

    def __init__(self) -> None:
        self.total = self.done = 0

    def start(self, total: int) -> None:
        self.total = total

    def describe(self, label: str) -> None:
        print(f"accelplug bench: step {self.done}/{self.total}: {label}", file=sys.stderr, flush=True)

    def advance(self) -> None:
        self.done += 1

    def finish(self) -> None:
        print(f"accelplug bench: step {self.done}/{self.total}: done", file=sys.stderr, flush=True)


def _split(text: str | None) -> tuple[str, ...]:
    return tuple(p.strip().lower() for p in (text or "").split(",") if p.strip())


def _print_table(report: BenchReport) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from ..bench.table import tables

    console = Console()
    for cells in tables(report):
        shown = Table(title=cells.title, caption=cells.caption, box=box.SIMPLE_HEAD, caption_justify="left")
        for header, right in zip(cells.headers, cells.right_aligned, strict=True):
            shown.add_column(header, justify="right" if right else "left", overflow="fold")
        for row in cells.rows:
            shown.add_row(*(cell.two_lines() for cell in row))
        console.print(shown)


def _command() -> str:
    import shlex

    args = sys.argv[1:]
    return "accelplug " + shlex.join(args) if "bench" in args else "accelplug bench"


def bench(
    models: Annotated[
        str | None,
        typer.Option(
            metavar="NAMES",
            help="Models: resnet50, bert, vgg16, tinycnn, tinybert, tinymlp "
            "(default: resnet50,bert,vgg16; --quick: tinycnn).",
        ),
    ] = None,
    accelerators: Annotated[
        str | None,
        typer.Option(
            metavar="NAMES",
            help="Comma-separated accelerators (default: every available one). The CPU is always measured too.",
        ),
    ] = None,
    steps: Annotated[int, typer.Option(min=1, metavar="N", help="Timed steps per round, on an accelerator.")] = 20,
    warmup: Annotated[int, typer.Option(min=0, metavar="N", help="Untimed steps first, on an accelerator.")] = 5,
    repeats: Annotated[
        int,
        typer.Option(min=1, metavar="N", help="Rounds per model and phase: the median and the slowest-fastest round."),
    ] = 3,
    cpu_steps: Annotated[
        int | None,
        typer.Option(
            min=1, metavar="N", help="Timed steps per round on the CPU (default: 3; with --quick: same as --steps)."
        ),
    ] = None,
    cpu_warmup: Annotated[
        int | None,
        typer.Option(min=0, metavar="N", help="Untimed steps first, on the CPU (default: 1; with --quick: --warmup)."),
    ] = None,
    cpu_repeats: Annotated[
        int | None, typer.Option(min=1, metavar="N", help="Rounds on the CPU (default: same as --repeats).")
    ] = None,
    precision: Annotated[
        str | None,
        typer.Option(metavar="P", help="Precision on accelerators: 32-true (default), bf16-mixed, 16-mixed, ..."),
    ] = None,
    cpu_precision: Annotated[
        str, typer.Option(metavar="P", help="Precision on the CPU, the speed-ups' reference.")
    ] = "32-true",
    quick: Annotated[
        bool, typer.Option("--quick", help="A tiny built-in CNN: seconds on a laptop, needs nothing extra.")
    ] = False,
    baseline: Annotated[
        bool,
        typer.Option(
            "--baseline", help="Also run a hand-written loop on the same model and data, interleaved; report the ratio."
        ),
    ] = False,
    cpu_baseline: Annotated[
        bool | None,
        typer.Option(
            "--cpu-baseline/--no-cpu-baseline",
            help="The hand-written loop on the CPU too (default: as --baseline); off keeps a GPU run short.",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR", help="Folder for bench.json, bench.png, bench.md (default: accelplug_bench/<time>/)."
        ),
    ] = None,
    json_path: Annotated[
        Path | None, typer.Option("--json", metavar="PATH", help="Write the JSON report here instead.")
    ] = None,
    chart: Annotated[Path | None, typer.Option(metavar="PATH", help="Write the PNG chart here instead.")] = None,
) -> None:
    """Measure training and evaluation throughput per model on each accelerator and the CPU.

    The experiment of the PyTorch MPS launch post (ResNet50 bs128, BERT-base bs64 seq128, VGG16 bs64,
    random weights, synthetic data made on the device), run through accelplug's Trainer (fit for
    training, validate for evaluation) on whatever this machine has.
    """
    import datetime

    from ..bench.chart import chart_available
    from ..bench.models import INSTALL_HINT
    from ..bench.output import plan_outputs
    from ..errors import MisconfigurationException

    # Everything a user can get wrong is checked before the first step: the chart's package and the
    # output paths, then names, precisions and packages; folders are created only once all is well.
    draw = chart_available()
    if not draw and chart is not None:
        raise MisconfigurationException(f"--chart needs matplotlib, which is not installed here: {INSTALL_HINT}")
    started = datetime.datetime.now(datetime.timezone.utc)
    outputs = plan_outputs(out, json_path, chart, draw=draw, now=started.astimezone())

    import platform

    import torch
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .. import __version__
    from ..bench import BenchConfig, BenchReport, run_bench
    from ..bench.chart import draw_chart
    from ..bench.models import DEFAULT_MODELS, QUICK_MODELS
    from ..bench.report import BenchSettings, with_speedups
    from ..bench.runner import validate
    from ..bench.table import cpu_only_note, markdown
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
        repeats=repeats,
        cpu_steps=cpu_steps if cpu_steps is not None else (steps if quick else 3),
        cpu_warmup=cpu_warmup if cpu_warmup is not None else (warmup if quick else 1),
        cpu_repeats=cpu_repeats if cpu_repeats is not None else repeats,
        precision=precision or "32-true",
        cpu_precision=cpu_precision,
        baseline=baseline,
        cpu_baseline=cpu_baseline,
    )
    targets = validate(config)
    outputs.create()
    if precision is not None and all(t.cls.name == "cpu" for t in targets):
        typer.echo(
            f"accelplug bench: note: --precision applies to accelerators and none is measured; "
            f"the CPU runs in --cpu-precision ({config.cpu_precision}).",
            err=True,
        )
    if not draw:
        typer.echo(f"accelplug bench: no chart: matplotlib is not installed here ({INSTALL_HINT}).", err=True)

    if sys.stderr.isatty():
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=Console(stderr=True), transient=True, refresh_per_second=2) as bar:
            results = run_bench(config, _RichProgress(bar))
    else:
        plain = _PlainProgress()
        results = run_bench(config, plain)
        plain.finish()

    measured_accelerator = any(t.cls.name != "cpu" for t in targets)
    report = BenchReport(
        accelplug=__version__,
        torch=torch.__version__,
        created_utc=started.isoformat(timespec="seconds"),
        platform=platform.platform(),
        command=_command(),
        settings=BenchSettings(
            models=list(config.models),
            accelerators=[t.cls.name for t in targets],
            steps=config.steps,
            warmup=config.warmup,
            repeats=config.repeats,
            cpu_steps=config.cpu_steps,
            cpu_warmup=config.cpu_warmup,
            cpu_repeats=config.cpu_repeats,
            precision=next((t.precision for t in targets if t.cls.name != "cpu"), config.precision),
            cpu_precision=next((t.precision for t in targets if t.cls.name == "cpu"), config.cpu_precision),
            cpu_threads=torch.get_num_threads(),
            baseline=config.baseline,
            cpu_baseline=config.baseline_for("cpu"),
        ),
        note=None if measured_accelerator else cpu_only_note(get_registry().available()),
        results=with_speedups(results),
    )
    _print_table(report)
    outputs.json.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    outputs.markdown.write_text(markdown(report), encoding="utf-8")
    written = [outputs.json, outputs.markdown]
    if outputs.chart is not None:
        written.append(draw_chart(report, outputs.chart))
    for path in written:
        typer.echo(f"wrote {path}")
    if outputs.chart is None:
        typer.echo(f"no chart: matplotlib is not installed here ({INSTALL_HINT})")


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
