"""``accelplug list``: every registered accelerator, where it came from, and whether it runs here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from .reports import ListReport


def collect() -> ListReport:
    """Ask every registered accelerator its cheap class-level questions (no device is initialised).

    The answers come from the registry's checked status: a plugin that raises, hangs or answers
    nonsense shows as unavailable with the cause, and is listed among the failed plugins.
    """
    from ..hardware.torch_backends import recorded_failure
    from ..registry import get_registry
    from .reports import AcceleratorInfo, FailedPlugin, ListReport

    registry = get_registry()
    accelerators = []
    for entry in registry.entries():
        cls, source = entry.cls, entry.source
        status = registry.status(cls)
        accelerators.append(
            AcceleratorInfo(
                name=cls.name,
                description=cls.description,
                device_type=cls.device_type,
                plugin=source.plugin,
                distribution=source.distribution,
                version=source.version,
                available=status.available,
                device_count=status.device_count,
                strategies=list(status.strategies),
                precisions=list(registry.trainable_precisions(cls, status.precisions)),
                auto_priority=cls.auto_priority,
                reason=status.reason,
                load_seconds=None if source.load_seconds is None else round(source.load_seconds, 3),
                probe_seconds=round(status.seconds, 3),
            )
        )
    failed = [
        FailedPlugin(plugin=f.plugin, distribution=f.distribution, version=f.version, error=f.error)
        for f in registry.failures()
    ]
    backend = recorded_failure()  # a torch.backends entry point that broke `import torch` (see cli.main)
    if backend is not None:
        error = backend.describe()
        failed.insert(
            0,
            FailedPlugin(
                plugin=backend.plugin, distribution=backend.distribution, version=backend.version, error=error
            ),
        )
    return ListReport(accelerators=accelerators, available=registry.available(), failed_plugins=failed)


def _slow_lines(report: ListReport) -> list[str]:
    """A line for each plugin that took long to import or to answer, with its time."""
    from ..registry import SLOW_PLUGIN_S

    lines = []
    for acc in report.accelerators:
        dist = f" ({acc.distribution} {acc.version or ''})".replace(" )", ")") if acc.distribution else ""
        where = f"plugin {acc.plugin!r}{dist}"
        if acc.load_seconds is not None and acc.load_seconds >= SLOW_PLUGIN_S:
            lines.append(f"slow plugin: {where} took {acc.load_seconds:.1f} s to import and register {acc.name!r}")
        if acc.probe_seconds >= SLOW_PLUGIN_S:
            lines.append(f"slow plugin: {where} took {acc.probe_seconds:.1f} s to answer whether {acc.name!r} runs")
    return lines


def _print_tables(report: ListReport) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title="Registered accelerators")
    for column in ("name", "plugin", "distribution", "available", "devices", "strategies"):
        table.add_column(column, overflow="fold")
    for acc in report.accelerators:
        dist = f"{acc.distribution} {acc.version or ''}".strip() if acc.distribution else "-"
        table.add_row(
            acc.name,
            acc.plugin,
            dist,
            "[green]yes[/]" if acc.available else "[red]no[/]",
            str(acc.device_count),
            ", ".join(acc.strategies),
        )
    console.print(table)
    for acc in report.accelerators:
        if acc.reason:  # long, actionable sentences: printed whole rather than squeezed into a column
            console.print(f"[bold]{acc.name}[/] unavailable: {acc.reason}", highlight=False)
    for line in _slow_lines(report):
        console.print(line, highlight=False)
    best = report.available[0] if report.available else "none"
    console.print(f"accelerator='auto' picks: [bold]{best}[/] (order: {', '.join(report.available) or 'none'})")
    if not report.failed_plugins:
        console.print("Failed plugins: none")
        return
    failed = Table(title="Plugins that failed to load or misbehaved", show_lines=True)
    for column in ("plugin", "distribution", "error"):
        failed.add_column(column, overflow="fold")
    for f in report.failed_plugins:
        failed.add_row(f.plugin, f"{f.distribution} {f.version or ''}".strip() if f.distribution else "-", f.error)
    console.print(failed)


def list_accelerators(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON (the ListReport model) instead of tables.")
    ] = False,
) -> None:
    """Every registered accelerator: plugin, availability, devices.

    For each accelerator: the plugin and distribution that registered it, whether it is available,
    its devices and strategies, and the reason when it is unavailable. Plugins that failed to load
    are listed after them, with the cause.
    """
    import warnings

    from ..errors import PluginLoadWarning
    from .stdout_guard import stdout_reserved

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginLoadWarning)  # reported in the table instead
        if not as_json:
            _print_tables(collect())
            return
        with stdout_reserved() as write:  # what plugins print goes to stderr, never into the JSON
            write(collect().model_dump_json(indent=2) + "\n")


def register(app: typer.Typer) -> None:
    app.command("list")(list_accelerators)
