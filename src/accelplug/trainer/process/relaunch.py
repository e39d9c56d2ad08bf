"""``Trainer(strategy="ddp")`` in a plain ``python script.py``: start the script again as one process per device.

Under a launcher (``accelplug launch``, ``torchrun``) nothing is started; the launcher's world size is
checked against ``num_nodes`` x ``devices`` instead, so a mismatch is named before any collective hangs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import MisconfigurationException

if TYPE_CHECKING:
    from ...strategies.base import Strategy

__all__ = ["relaunch_if_needed"]


def relaunch_if_needed(strategy: Strategy, accelerator: str, num_devices: int, num_nodes: int) -> None:
    """Start one process per device when DDP was asked for outside a launcher (this process then exits)."""
    from ...strategies.ddp import launched_by_torchrun

    if num_nodes > 1 and not launched_by_torchrun():
        raise MisconfigurationException(
            f"num_nodes={num_nodes} asks for a run over {num_nodes} machines, but this process was not started by a "
            f"launcher; run `accelplug launch --nnodes {num_nodes} --node-rank R --master-addr A --master-port P "
            "script.py` on each machine, or leave num_nodes at 1."
        )
    if not strategy.is_distributed:
        return
    if launched_by_torchrun():
        _check_world_size(num_devices, num_nodes)
        return
    if not strategy.needs_launcher(num_devices * num_nodes):
        return  # e.g. FSDP on one device: a process group of one, made in this process
    script = _main_script()
    how = (
        f"start it with `accelplug launch --accelerator {accelerator} --devices {num_devices} "
        f"script.py` (or `torchrun --nproc-per-node {num_devices} script.py`)"
    )
    if script is None:
        raise MisconfigurationException(
            f"strategy={strategy.name!r} with {num_devices} devices runs one process per device, "
            f"and this interpreter was not started from a script file that could be re-launched; {how}."
        )
    from ...launcher import relaunch_script

    print(
        f"accelplug: re-launching {script.name} as {num_devices} processes ({strategy.name}); "
        f"to control this yourself, {how}.",
        file=sys.stderr,
        flush=True,
    )
    raise SystemExit(relaunch_script(script, sys.argv[1:], num_devices, accelerator))


def _check_world_size(num_devices: int, nodes: int) -> None:
    """With ``num_nodes`` given, the launcher's ``WORLD_SIZE`` must be nodes x devices per node."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if nodes > 1 and world != nodes * num_devices:
        raise MisconfigurationException(
            f"num_nodes={nodes} with {num_devices} device(s) per node means {nodes * num_devices} "
            f"processes, but the launcher started WORLD_SIZE={world}; make --nnodes/--devices of "
            "`accelplug launch` match the Trainer's num_nodes/devices."
        )


def _main_script() -> Path | None:
    """The file run as ``python file.py`` (not ``-m``, ``-c`` or an interactive session), if any."""
    main = sys.modules.get("__main__")
    main_file = getattr(main, "__file__", None)
    if main is None or main_file is None or getattr(main, "__spec__", None) is not None:
        return None
    path = Path(main_file).resolve()
    return path if path.is_file() and path.suffix == ".py" else None
