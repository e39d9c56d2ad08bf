"""``accelplug config``: write the defaults file by questionnaire or ``--default``; ``config show``.

The questionnaire offers only what this machine can do (available accelerators, their device count,
the precisions and strategies each supports), so a file it writes always selects successfully here.
A preset option (``--devices 2``) answers its question in advance; with ``--default`` every question
not preset takes the built-in default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from ..accelerator import Accelerator
    from ..registry import AcceleratorRegistry

config_app = typer.Typer(
    help="Write the accelplug defaults file (questionnaire, or --default), or show the effective settings.",
    no_args_is_help=False,
)


def _ask_devices(cls: type[Accelerator]) -> str:
    from ..errors import MisconfigurationException

    def check(text: str) -> str:
        try:
            cls.parse_devices(text.strip())
        except MisconfigurationException as exc:
            raise typer.BadParameter(str(exc)) from None
        return text.strip()

    count = cls.device_count()
    question = (
        f"How many {cls.name} devices per machine? ('auto' = {cls.auto_device_count()}, a count up to {count}, "
        "-1 = all, or indices such as 0,1)"
    )
    answer: str = typer.prompt(question, default="auto", value_proc=check)
    return answer


def _choice(question: str, options: list[str] | tuple[str, ...], default: str) -> str:
    """Ask until the answer is one of ``options`` (typer's public API has no Choice type)."""

    def check(text: str) -> str:
        answer = text.strip().lower()
        if answer not in options:
            raise typer.BadParameter(f"{text!r} is not one of: {', '.join(options)}")
        return answer

    answer: str = typer.prompt(f"{question} [{'/'.join(options)}]", default=default, value_proc=check)
    return answer


def _at_least_two(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 2:
        raise typer.BadParameter(f"{text!r} is not a whole number of machines of at least 2")
    return int(text)


def _questionnaire(preset: dict[str, Any]) -> dict[str, Any]:
    """Ask what is not preset; each question offers only what this machine supports."""
    from ..registry import get_registry

    registry = get_registry()
    available = registry.available()
    answers = dict(preset)
    if "accelerator" not in answers:
        answers["accelerator"] = _choice(
            f"Which accelerator should runs use? ('auto' = the best available, {available[0]} here)",
            ["auto", *available],
            "auto",
        )
    name = answers["accelerator"]
    cls = registry.get(_resolve_name(name, available, registry))
    if "devices" not in answers:
        answers["devices"] = "auto" if cls.device_count() <= 1 else _ask_devices(cls)
    strategies = cls.supported_strategies()
    if "strategy" not in answers:
        answers["strategy"] = (
            "auto" if len(strategies) == 1 else _choice("Which strategy?", ["auto", *strategies], "auto")
        )
    if "precision" not in answers:
        answers["precision"] = _choice(
            f"Which precision? ({cls.name} supports these)", cls.supported_precisions(), "32-true"
        )
    if "num_nodes" not in answers:
        multi = "ddp" in strategies and typer.confirm("Will a run span more than one machine?", default=False)
        answers["num_nodes"] = typer.prompt("How many machines?", value_proc=_at_least_two) if multi else 1
    if "mps_fallback" not in answers:
        answers["mps_fallback"] = cls.name == "mps" and typer.confirm(
            "Let operations the Apple GPU lacks run on the CPU (PYTORCH_ENABLE_MPS_FALLBACK=1)?", default=False
        )
    return answers


def _resolve_name(name: str, available: list[str], registry: AcceleratorRegistry) -> str:
    """The accelerator a preset or answer means here ('auto' and 'gpu' resolve to the best one)."""
    if name == "auto":
        return available[0]
    if name == "gpu":
        gpus = [n for n in available if registry.get(n).is_gpu]
        return gpus[0] if gpus else available[0]
    return registry.get(name).name


def _overridden_by_env(values: dict[str, Any]) -> list[str]:
    from ..config import _env_name

    return [name for name in (_env_name(k) for k in values) if name is not None]


@config_app.callback(invoke_without_command=True)
def config(
    ctx: typer.Context,
    default: Annotated[bool, typer.Option("--default", help="Write the file without asking any question.")] = False,
    accelerator: Annotated[str | None, typer.Option(help="Preset answer: accelerator name, 'auto' or 'gpu'.")] = None,
    devices: Annotated[str | None, typer.Option(help="Preset answer: 'auto', a count, -1 or indices '0,2'.")] = None,
    strategy: Annotated[str | None, typer.Option(help="Preset answer: 'auto', 'single_device', 'ddp', ...")] = None,
    precision: Annotated[
        str | None, typer.Option(help="Preset answer: '32-true', 'bf16-mixed', '16-mixed', '64-true'.")
    ] = None,
    num_nodes: Annotated[int | None, typer.Option(help="Preset answer: machines per run.")] = None,
    mps_fallback: Annotated[
        bool | None, typer.Option("--mps-fallback/--no-mps-fallback", help="Preset answer: MPS CPU fallback.")
    ] = None,
) -> None:
    """Write the defaults file by asking a few questions (or none with --default).

    The file is the one `accelplug config show` names: $ACCELPLUG_CONFIG_FILE, or config.toml in
    the user config directory.
    """
    if ctx.invoked_subcommand is not None:
        return
    from ..config import FIELDS, Settings, config_path, validate_values, write_config_file

    preset = {
        k: v
        for k, v in {
            "accelerator": accelerator,
            "devices": devices,
            "strategy": strategy,
            "precision": precision,
            "num_nodes": num_nodes,
            "mps_fallback": mps_fallback,
        }.items()
        if v is not None
    }
    validate_values(preset)  # a bad preset fails before any question is asked
    if default:
        defaults = {k: f.default for k, f in Settings.model_fields.items()}
        values = {**defaults, **preset}
    else:
        values = _questionnaire(preset)
    path = write_config_file(config_path(), {k: values[k] for k in FIELDS})
    typer.echo(f"Wrote {path}:")
    typer.echo(path.read_text(encoding="utf-8").rstrip())
    shadowing = _overridden_by_env(values)
    if shadowing:
        typer.echo(f"Note: set in the environment, so they win over the file: {', '.join(shadowing)}")


@config_app.command("show")
def show(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (the ConfigReport model).")] = False,
) -> None:
    """Print the effective settings and where each comes from (argument, environment, file, default)."""
    from ..config import explain_settings
    from .models import ConfigReport, SettingReport

    settings, origins, config = explain_settings()
    rows = [SettingReport(key=k, value=getattr(settings, k), source=str(origins[k])) for k in origins]
    report = ConfigReport(path=str(config.path), exists=config.exists, settings=rows, error=None)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(f"config file: {report.path} ({'found' if report.exists else 'not found, using defaults'})")
    table = Table("key", "value", "source")
    for row in rows:
        table.add_row(row.key, str(row.value), row.source)
    console.print(table)


def register(app: typer.Typer) -> None:
    app.add_typer(config_app, name="config")
