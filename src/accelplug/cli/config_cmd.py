"""``accelplug config``: write the defaults file by questionnaire or ``--default``; ``config show``.

The questionnaire follows the selection rules and offers only what this machine can do: the
available accelerators, their device count (with what ``'auto'`` means for that accelerator), the
number of machines, then only the strategies that fit the number of processes (no
``single_device`` for several), then the precisions that accelerator supports, under their names or
aliases (``bf16``, ``16``). A wrong answer is explained, with the closest accepted one, and asked
again. Before writing, it shows a summary and asks for confirmation; the answers are then checked
once more with :func:`accelplug.select`, so a file it writes selects successfully here.

A preset option (``--devices 2``) answers its question in advance. With ``--default`` no question is
asked; the presets are checked for what holds on any machine (``single_device`` with several devices
or machines, a strategy or precision the named accelerator never supports) but not against this
machine's hardware, so a file for another machine can be prepared here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from ..accelerator import Accelerator
    from ..registry import AcceleratorRegistry
    from ..status import AcceleratorStatus

config_app = typer.Typer(
    help="Write the defaults file, or show the effective settings.",
    no_args_is_help=False,
    rich_markup_mode=None,
)


def _choice(question: str, options: list[str], default: str, aliases: dict[str, str] | None = None) -> str:
    """Ask until the answer is one of ``options`` (or an alias of one); a wrong answer gets the closest match."""
    from ..errors import did_you_mean

    table = {o: o for o in options} | (aliases or {})

    def check(text: str) -> str:
        answer = text.strip().lower()
        if answer not in table:
            raise typer.BadParameter(
                f"{text!r} is not one of: {', '.join(options)}.{did_you_mean(answer, list(table))}"
            )
        return table[answer]

    answer: str = typer.prompt(f"{question} [{'/'.join(options)}]", default=default, value_proc=check)
    return answer


def _device_count_of(devices: str, cls: type[Accelerator]) -> int:
    """How many devices a (valid) devices answer selects on this machine."""
    return len(cls.parse_devices(int(devices) if devices.lstrip("-").isdigit() else devices))


def _ask_devices(cls: type[Accelerator], status: AcceleratorStatus) -> str:
    from ..errors import MisconfigurationException

    count, auto = status.device_count, status.auto_device_count
    auto_means = f"{auto} here" if auto == count else f"{auto} here (not all {count})"
    accepted = f"'auto' = {auto_means}, a count 1..{count}, -1 = all {count}, or indices such as 0,1"

    def check(text: str) -> str:
        answer = text.strip().lower()
        try:
            if not answer.isascii():
                raise MisconfigurationException(answer)
            cls.parse_devices(int(answer) if answer.lstrip("-").isdigit() else answer)
        except MisconfigurationException:
            raise typer.BadParameter(
                f"{text!r} is not a devices value for {cls.name}. Accepted forms here: {accepted}."
            ) from None
        return answer

    answer: str = typer.prompt(f"How many {cls.name} devices per machine? {accepted}", default="auto", value_proc=check)
    return answer


def _at_least_two(text: str) -> int:
    if not (text.strip().isascii() and text.strip().isdigit()) or int(text) < 2:
        raise typer.BadParameter(f"{text!r} is not a whole number of machines of at least 2")
    return int(text)


def _questionnaire(preset: dict[str, Any]) -> dict[str, Any]:
    """Ask what is not preset, in the order the selection rules depend on each other."""
    from ..errors import AcceleratorUnavailableError
    from ..registry import get_registry

    registry = get_registry()
    available = registry.available()
    answers = dict(preset)
    if "accelerator" not in answers:
        gpus = [n for n in available if registry.get(n).is_gpu]
        answers["accelerator"] = _choice(
            f"Which accelerator? 'auto' picks the best available ({available[0]} here"
            + (f"; 'gpu' picks {gpus[0]})" if gpus else ")"),
            ["auto", *(["gpu"] if gpus else []), *available],
            "auto",
        )
    cls = registry.get(_resolve_name(answers["accelerator"], available, registry))
    status = registry.status(cls)  # the plugin's answers, asked in isolation and checked
    if status.reason is not None:  # a preset accelerator this machine cannot run: nothing to ask about it here
        raise AcceleratorUnavailableError(cls.name, status.reason, available)
    if "devices" not in answers:
        answers["devices"] = "auto" if status.device_count <= 1 else _ask_devices(cls, status)
    strategies = status.strategies
    if "num_nodes" not in answers:
        multi = "ddp" in strategies and typer.confirm("Will a run span more than one machine?", default=False)
        answers["num_nodes"] = typer.prompt("How many machines?", value_proc=_at_least_two) if multi else 1
    if "strategy" not in answers:
        processes = _device_count_of(str(answers["devices"]), cls) * int(answers["num_nodes"])
        fitting = [s for s in strategies if processes == 1 or s != "single_device"]
        answers["strategy"] = (
            "auto"
            if len(fitting) <= 1
            else _choice(f"Which strategy for {processes} process(es) per run?", ["auto", *fitting], "auto")
        )
    if "precision" not in answers:
        supported = list(registry.trainable_precisions(cls, status.precisions))
        aliases = {alias: name for alias, name in registry.precision_aliases().items() if name in supported}
        spellings = ", ".join(a for a in aliases if a not in supported)
        answers["precision"] = _choice(
            f"Which precision? ({spellings} work too)" if spellings else "Which precision?",
            supported,
            "32-true",
            aliases,
        )
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


def _check_here(values: dict[str, Any]) -> None:
    """The questionnaire's answers, checked by the selection rules on this machine."""
    from ..errors import MisconfigurationException
    from ..selection import select

    devices = str(values["devices"])
    select(
        values["accelerator"],
        int(devices) if devices.lstrip("-").isdigit() else devices,
        values["strategy"],
        values["precision"],
    )
    if values["num_nodes"] > 1 and values["strategy"] == "single_device":  # 'auto' becomes ddp when launched
        raise MisconfigurationException(
            f"num_nodes={values['num_nodes']} runs one process per device on each machine, which strategy "
            "'single_device' cannot do; use strategy 'ddp' or 'auto'."
        )


def _check_anywhere(values: dict[str, Any]) -> None:
    """What no machine can run: checked for ``--default`` presets without asking this machine's hardware."""
    from ..errors import MisconfigurationException

    devices, strategy = str(values["devices"]), values["strategy"]
    count = int(devices) if devices.isdigit() else len(devices.split(",")) if "," in devices else None
    if strategy == "single_device" and ((count or 1) > 1 or values["num_nodes"] > 1):
        what = f"devices={devices!r}" if (count or 1) > 1 else f"num_nodes={values['num_nodes']}"
        raise MisconfigurationException(
            f"strategy='single_device' runs one process, but {what} asks for several; "
            "use strategy 'ddp' or 'auto', or one device on one machine."
        )
    if values["accelerator"] in ("auto", "gpu"):
        return
    from ..registry import get_registry

    registry = get_registry()
    cls = registry.get(values["accelerator"])
    status = registry.status(cls)
    strategies = status.strategies
    if strategy != "auto" and strategy not in strategies:
        raise MisconfigurationException(
            f"strategy={strategy!r} cannot run on {cls.name!r}, which supports "
            f"{', '.join(repr(s) for s in strategies)}."
        )
    if values["num_nodes"] > 1 and "ddp" not in strategies:
        raise MisconfigurationException(
            f"num_nodes={values['num_nodes']}: {cls.name!r} cannot run one process per device on several machines "
            "(it does not support 'ddp')."
        )
    from ..selection import check_precision_runs

    canonical = registry.get_precision(values["precision"]).name
    check_precision_runs(registry, cls, status.precisions, values["precision"], canonical)


def _overridden_by_env(values: dict[str, Any]) -> list[str]:
    from ..config import _env_name

    return [name for name in (_env_name(k) for k in values) if name is not None]


def _summary(values: dict[str, Any], fields: tuple[str, ...]) -> str:
    width = max(len(k) for k in fields)
    shown = {k: str(v).lower() if isinstance(v, bool) else v for k, v in values.items()}
    return "\n".join(f"  {key:<{width}} = {shown[key]}" for key in fields)


@config_app.callback(invoke_without_command=True)
def config(
    ctx: typer.Context,
    default: Annotated[bool, typer.Option("--default", help="Write the file without asking any question.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Write the answers without asking to confirm.")] = False,
    accelerator: Annotated[
        str | None, typer.Option(metavar="NAME", help="Preset answer: accelerator name, 'auto' or 'gpu'.")
    ] = None,
    devices: Annotated[
        str | None, typer.Option(metavar="N", help="Preset answer: 'auto', a count, -1 or indices '0,2'.")
    ] = None,
    strategy: Annotated[
        str | None, typer.Option(metavar="NAME", help="Preset answer: 'auto', 'single_device', 'ddp', ...")
    ] = None,
    precision: Annotated[
        str | None,
        typer.Option(metavar="P", help="Preset answer: '32-true', 'bf16-mixed', '16-mixed', '64-true' or an alias."),
    ] = None,
    num_nodes: Annotated[int | None, typer.Option(metavar="N", help="Preset answer: machines per run.")] = None,
    mps_fallback: Annotated[
        bool | None, typer.Option("--mps-fallback/--no-mps-fallback", help="Preset answer: MPS CPU fallback.")
    ] = None,
) -> None:
    """Write the defaults file by asking a few questions (or none with --default).

    The file is the one `accelplug config show` names: $ACCELPLUG_CONFIG_FILE, or config.toml in
    the user config directory. The questionnaire shows a summary and asks before writing.
    """
    if ctx.invoked_subcommand is not None:
        return
    from ..config import FIELDS, Settings, config_path, validate_values, write_config_file

    preset: dict[str, Any] = {
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
    preset = {k: v for k, v in validate_values(preset).items() if k in preset}  # canonical, before any question
    path = config_path()
    if default:
        values = {**{k: f.default for k, f in Settings.model_fields.items()}, **preset}
        _check_anywhere(values)
    else:
        values = validate_values(_questionnaire(preset))
        _check_here(values)
        typer.echo(f"\nSummary:\n{_summary(values, FIELDS)}")
        shadowing = _overridden_by_env(values)
        if shadowing:
            typer.echo(f"Note: set in the environment, so they win over the file: {', '.join(shadowing)}")
        if not yes and not typer.confirm(f"Write these to {path}?", default=True):
            typer.echo("Nothing written.")
            return
    written = write_config_file(path, {k: values[k] for k in FIELDS})
    typer.echo(f"Wrote {written}:")
    typer.echo(written.read_text(encoding="utf-8").rstrip())
    shadowing = _overridden_by_env(values)
    if default and shadowing:
        typer.echo(f"Note: set in the environment, so they win over the file: {', '.join(shadowing)}")


@config_app.command("show")
def show(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (the ConfigReport model).")] = False,
) -> None:
    """Print the effective settings and where each comes from (argument, environment, file, default)."""
    from ..config import explain_settings
    from .reports import ConfigReport, SettingReport

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
