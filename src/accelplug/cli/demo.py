"""``accelplug demo``: train a small real classifier here and report what happened."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add the ``demo`` command to ``app``."""

    @app.command("demo")
    def demo_command(
        cpu: Annotated[bool, typer.Option("--cpu", help="Train on the CPU whatever else is available.")] = False,
        accelerator: Annotated[
            str | None, typer.Option("--accelerator", help="Accelerator name, 'gpu' or 'auto'.")
        ] = None,
        devices: Annotated[str | None, typer.Option("--devices", help="Devices (several need --cpu or a GPU).")] = None,
        max_epochs: Annotated[int, typer.Option("--max-epochs", help="Training epochs.")] = 15,
        root_dir: Annotated[
            Path | None, typer.Option("--root-dir", help="Where logs and checkpoints go (default: a temp folder).")
        ] = None,
    ) -> None:
        """Train a digits classifier (scikit-learn's data, no download) on the best accelerator here."""
        from ..demo import run_demo

        result = run_demo(cpu=cpu, accelerator=accelerator, devices=devices, max_epochs=max_epochs, root_dir=root_dir)
        raise typer.Exit(0 if result.passed else 1)
