"""``fabric.launch()``: make sure one process runs per device, then bring up this process's environment.

Three ways, as in Lightning Fabric:

- **already launched** (``accelplug launch``, ``torchrun``, a SLURM/cluster launcher setting the same
  variables): the process group is created from the environment, the launcher's world size checked against
  ``num_nodes`` x ``devices``; one device needs no launcher at all;
- **a plain ``python script.py``** with several devices: the script is started again as one process per
  device under torchrun's agent (:func:`accelplug.launcher.relaunch_if_needed`, the Trainer's own path), and
  this process exits with the workers' exit code once they finish. Lightning instead keeps the first process
  as rank 0; the difference shows only in code placed before ``launch()``, which also runs here once;
- **a function** with ``strategy="ddp_spawn"``/``"ddp_fork"``/``"ddp_notebook"``: the processes are started
  by accelplug's one local starter (:mod:`accelplug.distributed.local_processes`, the Trainer's too; fork works
  in a notebook), each runs ``function(fabric, *args)``, and ``launch`` returns rank 0's result.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..errors import MisconfigurationException
from ..launcher import main_script, relaunch_if_needed
from ..selection import RunSetup, adopt_environment, cluster_environment
from ..strategies.ddp import launched_by_torchrun

__all__ = ["launch"]


def launch(plan: RunSetup, bring_up: Callable[[], None], function: Callable[[], Any] | None) -> Any:
    """Run ``function`` (the user's, bound to its Fabric and arguments) here or in the processes started for
    it, after ``bring_up`` (the process group) in each; rank 0's result."""
    strategy = plan.strategy
    accelerator = plan.selection.accelerator.name
    devices, num_nodes = plan.selection.num_devices, plan.num_nodes
    environment = cluster_environment(plan.cluster_environment)
    external = adopt_environment(environment, devices, num_nodes)  # srun, mpirun, torchrun...: ranks exported
    needs = strategy.is_distributed and strategy.needs_launcher(devices * num_nodes)
    if external or not needs or launched_by_torchrun():
        relaunch_if_needed(strategy, accelerator, devices, num_nodes, environment)  # checks the world size
        bring_up()
        return function() if function is not None else None
    if plan.start_method == "popen":
        if main_script() is None and function is not None:
            raise MisconfigurationException(
                f"strategy={strategy.name!r} with {devices} devices re-launches the script as one process per "
                "device, and this interpreter runs no script file (a notebook, python -c). Use "
                "Fabric(strategy='ddp_notebook', ...) with fabric.launch(function), or start a script with "
                f"`accelplug launch --devices {devices} script.py`."
            )
        relaunch_if_needed(strategy, accelerator, devices, num_nodes, environment)  # exits with the workers
    spelling = {"spawn": "ddp_spawn", "fork": "ddp_fork"}.get(plan.start_method, "ddp")
    if function is None:
        raise MisconfigurationException(
            f"strategy={spelling!r} starts its processes from a function: call fabric.launch(train) with a "
            "function train(fabric, ...) holding the code to run in each process."
        )
    if num_nodes > 1:
        raise MisconfigurationException(
            f"strategy={spelling!r} starts processes on this machine only; for num_nodes={num_nodes} run "
            "`accelplug launch --nnodes ...` on each machine with strategy='ddp'."
        )
    return _spawn(bring_up, function, devices, plan.start_method)


def _spawn(bring_up: Callable[[], None], function: Callable[[], Any], devices: int, start_method: str) -> Any:
    """The processes started by accelplug's one local starter (as the Trainer's ``ddp_spawn``/``ddp_fork``)."""
    from ..distributed.local_processes import start_local_processes

    spelling = {"spawn": "ddp_spawn", "fork": "ddp_fork"}.get(start_method, start_method)
    objects = {"bring_up": bring_up, "function": function}
    return start_local_processes(_run_rank, objects, devices, start_method, strategy_name=spelling)


def _run_rank(bring_up: Callable[[], None], function: Callable[[], Any]) -> Any:
    """One started process: the environment (process group), the function; rank 0's result goes back."""
    bring_up()
    output = function()
    return output if os.environ.get("LOCAL_RANK") == "0" else None
