"""``accelplug demo``: train a small real classifier here and report what happened.

The options are checked before anything is trained, so a folder that cannot be written (or a devices
value that is not a number) costs a one-line error rather than a traceback after the first epoch.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from ..errors import MisconfigurationException


def _writable_folder(path: Path) -> Path:
    """Create ``path`` if needed and prove a file can be written in it (what the logs and checkpoints need)."""
    for parent in [path, *path.parents]:
        if parent.exists():
            if not parent.is_dir():
                what = "is a file" if parent == path else f"cannot be created: {parent} is not a folder"
                raise MisconfigurationException(f"--root-dir {path} {what}; give a folder for the demo's logs.")
            break
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise MisconfigurationException(
            f"--root-dir {path} cannot be written: {exc.strerror or exc}; give a folder you can write to."
        ) from None
    return path


def _devices(value: str | None) -> str | None:
    if value is not None and not value.strip().isascii():
        from ..hardware.devices import ACCEPTED_DEVICES_FORMS

        raise MisconfigurationException(f"--devices={value!r} is invalid. Accepted forms: {ACCEPTED_DEVICES_FORMS}.")
    return value


def register(app: typer.Typer) -> None:
    """Add the ``demo`` command to ``app``."""

    @app.command("demo")
    def demo_command(
        cpu: Annotated[bool, typer.Option("--cpu", help="Train on the CPU whatever else is available.")] = False,
        accelerator: Annotated[
            str | None, typer.Option("--accelerator", metavar="NAME", help="Accelerator name, 'gpu' or 'auto'.")
        ] = None,
        devices: Annotated[
            str | None, typer.Option("--devices", metavar="N", help="Devices (several need --cpu or a GPU).")
        ] = None,
        max_epochs: Annotated[int, typer.Option("--max-epochs", metavar="N", help="Training epochs.")] = 15,
        root_dir: Annotated[
            Path | None,
            typer.Option("--root-dir", metavar="DIR", help="Where logs and checkpoints go (default: a temp folder)."),
        ] = None,
    ) -> None:
        """Train a small digits classifier on the best accelerator here.

        scikit-learn's handwritten digits (no download), a two-layer network, and a report of the
        accelerator chosen and why, the validation accuracy, the checkpoint and the metrics file.
        """
        if root_dir is not None:
            _writable_folder(Path(os.path.expanduser(root_dir)))
        from ..demos.classifier import run_demo

        result = run_demo(
            cpu=cpu, accelerator=accelerator, devices=_devices(devices), max_epochs=max_epochs, root_dir=root_dir
        )
        raise typer.Exit(0 if result.passed else 1)
