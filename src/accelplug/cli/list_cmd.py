"""``accelplug list``: every registered accelerator, where it came from, and whether it runs here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from .models import ListReport


def collect() -> ListReport:
    """Ask every registered accelerator its cheap class-level questions (no device is initialised)."""
    from ..registry import get_registry
    from .models import AcceleratorInfo, FailedPlugin, ListReport

    registry = get_registry()
    accelerators = []
    for entry in registry.entries():
        cls, source = entry.cls, entry.source
        reason = cls.unavailable_reason()
        accelerators.append(
            AcceleratorInfo(
                name=cls.name,
                description=cls.description,
                device_type=cls.device_type,
                plugin=source.plugin,
                distribution=source.distribution,
                version=source.version,
                available=reason is None,
                device_count=cls.device_count() if reason is None else 0,
                strategies=list(cls.supported_strategies()),
                precisions=list(cls.supported_precisions()),
                auto_priority=cls.auto_priority,
                reason=reason,
            )
        )
    failed = [
        FailedPlugin(plugin=f.plugin, distribution=f.distribution, version=f.version, error=f.error)
        for f in registry.failures()
    ]
    return ListReport(accelerators=accelerators, available=registry.available(), failed_plugins=failed)


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
    best = report.available[0] if report.available else "none"
    console.print(f"accelerator='auto' picks: [bold]{best}[/] (order: {', '.join(report.available) or 'none'})")
    if not report.failed_plugins:
        console.print("Failed plugins: none")
        return
    failed = Table(title="Plugins that failed to load (skipped)", show_lines=True)
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

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginLoadWarning)  # reported in the table instead
        report = collect()
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        _print_tables(report)


def register(app: typer.Typer) -> None:
    app.command("list")(list_accelerators)
