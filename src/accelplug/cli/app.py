"""The typer application: global options and the list of commands.

Each command lives in its own small module whose top level imports only typer; torch, the registry
and everything heavy are imported inside the command, so ``accelplug --help`` answers at once.
Shell completion is on: ``accelplug --install-completion`` (bash, zsh, fish, PowerShell).
``launch`` and ``demo`` come from the Trainer's modules through their ``register(app)`` functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import typer

from . import bench_cmd, config_cmd, demo_cmd, env_cmd, launch_cmd, list_cmd


@dataclass
class _State:
    """Options of the top-level callback that ``main`` needs after a command has failed."""

    debug: bool = False


state = _State()

#: Help is click's plain layout (``rich_markup_mode=None``): a switch shows no ``<bool>`` type, an
#: option shows its metavar (``--devices N``), and usage lines read like argparse's and torchrun's.
app = typer.Typer(
    name="accelplug",
    help="Run PyTorch training on whatever accelerator this machine has: CPU, CUDA, Apple MPS, or a plugin.",
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"accelplug {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show the full traceback of a configuration error.")] = False,
) -> None:
    """Run PyTorch training on whatever accelerator this machine has: CPU, CUDA, Apple MPS, or a plugin.

    Exit codes: 0 success, 2 a configuration error (the message says what to change).
    """
    state.debug = debug


list_cmd.register(app)
env_cmd.register(app)
config_cmd.register(app)
bench_cmd.register(app)


# ``launch`` and ``demo`` belong to the Trainer; they plug in through the same ``register``.
launch_cmd.register(app)
demo_cmd.register(app)
