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
  with multiprocessing (fork works in a notebook), each runs ``function(fabric, *args)``, and ``launch`` returns
  rank 0's result.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..errors import MisconfigurationException
from ..launcher import adopt_environment, cluster_environment, free_port, main_script, relaunch_if_needed
from ..strategies.ddp import launched_by_torchrun
from .connector import FabricPlan

__all__ = ["launch"]


def launch(plan: FabricPlan, bring_up: Callable[[], None], function: Callable[[], Any] | None) -> Any:
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
    import torch.multiprocessing as mp

    results = mp.get_context(start_method).SimpleQueue()
    port = str(free_port())
    mp.start_processes(  # type: ignore[attr-defined,no-untyped-call]
        _worker,
        args=(bring_up, function, devices, port, results),
        nprocs=devices,
        start_method=start_method,
        join=True,
    )
    return results.get() if not results.empty() else None


def _worker(
    local_rank: int,
    bring_up: Callable[[], None],
    function: Callable[[], Any],
    devices: int,
    port: str,
    results: Any,
) -> None:
    """One started process: torchrun's variables, the environment, the function; rank 0 sends its result."""
    os.environ.update(
        {
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": port,
            "RANK": str(local_rank),
            "LOCAL_RANK": str(local_rank),
            "WORLD_SIZE": str(devices),
            "LOCAL_WORLD_SIZE": str(devices),
            "GROUP_RANK": "0",
        }
    )
    bring_up()
    output = function()
    if local_rank == 0:
        results.put(output)
