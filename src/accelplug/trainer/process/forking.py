"""``strategy="ddp_notebook"``/``"ddp_fork"``: ``fit`` forks one process per device and takes rank 0's result back.

A notebook (Jupyter, Colab, Kaggle) has no script to start again under torchrun, but it can fork: each
forked process inherits the model, the data and the Trainer as they are, is told its rank through
torch's variables (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``/``MASTER_PORT`` on a free local port),
and runs the fit as a DDP rank. When all have finished, rank 0's trained weights and the Trainer's
loop state (step, epoch, metrics) are loaded into the objects of this process, so the cells that
follow see a trained model, as with Lightning's ``ddp_notebook``.

Forking a process whose CUDA is initialised gives children a broken CUDA context; that is refused
before anything is forked, with what to do instead (as Lightning does).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ...errors import MisconfigurationException

__all__ = ["check_fork_safe", "run_in_forked_processes"]


#: LoopState fields holding the worker's own loaders (and the closure that makes them): never sent back.
_PROCESS_LOCAL = frozenset({"data", "train_source"})


def check_fork_safe(strategy_name: str) -> None:
    """Refuse to fork once CUDA is initialised in this process (children would inherit a broken context)."""
    if torch.cuda.is_initialized():  # type: ignore[no-untyped-call]
        raise MisconfigurationException(
            f"strategy={strategy_name!r} forks one process per device, but CUDA is already initialised in this "
            "process (a cell used the GPU before fit), and a forked process cannot use CUDA then. Restart the "
            "kernel and run fit before any CUDA call, or run a script with strategy='ddp'."
        )


def run_in_forked_processes(trainer: Any, model: torch.nn.Module, work: Callable[[], Any], devices: int) -> Any:
    """Run ``work`` (a fit, validate, test or predict) in ``devices`` forked processes; rank 0's result.

    ``model`` then holds rank 0's weights and ``trainer`` its loop state (step, epoch, metrics).
    """
    import torch.multiprocessing as mp

    check_fork_safe("ddp_notebook")
    from ...launcher import free_port

    port = str(free_port())
    with tempfile.TemporaryDirectory(prefix="accelplug-fork-") as folder:
        result = Path(folder) / "rank0.pt"
        mp.start_processes(  # type: ignore[attr-defined,no-untyped-call]
            _worker, args=(trainer, model, work, devices, port, result), nprocs=devices, start_method="fork"
        )
        # A file this process's own child wrote a moment ago in a private folder: not untrusted input.
        outcome = torch.load(result, map_location="cpu", weights_only=False)
    model.load_state_dict(outcome["weights"])
    for name, value in outcome["state"].items():
        setattr(trainer.state, name, value)
    callback = trainer.checkpoint_callback
    if callback is not None:
        for name, value in outcome["checkpoint_paths"].items():
            setattr(callback, name, value)
    return outcome["result"]


def _worker(
    local_rank: int,
    trainer: Any,
    model: torch.nn.Module,
    work: Callable[[], Any],
    devices: int,
    port: str,
    result: Path,
) -> None:
    """One forked rank: torch's variables, the work, and on rank 0 the outcome written for the parent."""
    os.environ.update(
        {
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": port,
            "RANK": str(local_rank),
            "LOCAL_RANK": str(local_rank),
            "WORLD_SIZE": str(devices),
            "LOCAL_WORLD_SIZE": str(devices),
            "NODE_RANK": "0",
        }
    )
    output = work()
    if local_rank == 0:
        callback = trainer.checkpoint_callback
        paths = {
            name: getattr(callback, name)
            for name in ("best_model_path", "last_model_path", "best_model_score")
            if callback is not None and hasattr(callback, name)
        }
        weights = {k: v.detach().cpu() for k, v in model.state_dict().items()}
        # The loop state comes back without what only makes sense in the worker (its loaders and what makes them).
        state = {k: v for k, v in vars(trainer.state).items() if k not in _PROCESS_LOCAL}
        outcome = {"weights": weights, "state": state, "checkpoint_paths": paths, "result": output}
        torch.save(outcome, result)
