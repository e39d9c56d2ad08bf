"""``accelplug launch``: run a script as one process per device through torchrun.

Everything after the script path belongs to the script (``allow_interspersed_args=False``), so a
script option that happens to share a name with one of ours (``--devices``) reaches the script.
"""

from __future__ import annotations

from typing import Annotated

import typer

_PASS_THROUGH = {"allow_extra_args": True, "ignore_unknown_options": True, "allow_interspersed_args": False}


def register(app: typer.Typer) -> None:
    """Add the ``launch`` command to ``app``."""

    @app.command("launch", context_settings=_PASS_THROUGH)
    def launch_command(
        ctx: typer.Context,
        script: Annotated[str, typer.Argument(help="The Python script to run; the arguments after it go to it.")],
        cpu: Annotated[bool, typer.Option("--cpu", help="Use the CPU (sets ACCELPLUG_ACCELERATOR=cpu).")] = False,
        accelerator: Annotated[
            str | None, typer.Option("--accelerator", help="Accelerator name, 'gpu' or 'auto'.")
        ] = None,
        devices: Annotated[
            str | None, typer.Option("--devices", help="Processes on this node: a count, -1, 'auto' or '0,2'.")
        ] = None,
        nnodes: Annotated[int | None, typer.Option("--nnodes", help="Machines taking part.")] = None,
        node_rank: Annotated[int, typer.Option("--node-rank", help="This machine's rank, 0..nnodes-1.")] = 0,
        master_addr: Annotated[
            str | None, typer.Option("--master-addr", help="Address of the node-rank-0 machine.")
        ] = None,
        master_port: Annotated[
            int | None, typer.Option("--master-port", help="Rendezvous port (a free one when omitted, 1 node).")
        ] = None,
        mps_fallback: Annotated[
            bool | None,
            typer.Option("--mps-fallback/--no-mps-fallback", help="Set PYTORCH_ENABLE_MPS_FALLBACK=1 for the script."),
        ] = None,
    ) -> None:
        """Run SCRIPT as one process per device (torchrun's agent); a failing rank stops the job."""
        from ..launch import launch

        code = launch(
            script,
            list(ctx.args),
            cpu=cpu,
            accelerator=accelerator,
            devices=devices,
            nnodes=nnodes,
            node_rank=node_rank,
            master_addr=master_addr,
            master_port=master_port,
            mps_fallback=mps_fallback,
        )
        raise typer.Exit(code)
