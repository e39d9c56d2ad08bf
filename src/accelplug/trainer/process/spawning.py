"""``strategy="ddp_spawn"``/``"ddp_fork"``/``"ddp_notebook"``: a call runs in one new process per device.

``fit`` (and validate, test, predict) starts the processes through accelplug's one local starter
(:mod:`accelplug.distributed.local_processes`, which also serves ``Fabric.launch(function)``): each runs the
call as one DDP rank. ``fork`` (``ddp_fork``, ``ddp_notebook``) works where no script can be started again,
a notebook included; ``spawn`` (``ddp_spawn``) starts fresh interpreters that receive the Trainer, the model
and the data pickled, as Lightning's ``ddp_spawn`` does, so it never runs the script again either. The
call is sent as the stage's function and its arguments (``functools.partial`` of a module-level function),
never as a closure, so it pickles.

When all processes have finished, rank 0's outcome comes back into the objects of this process, as in
Lightning: the trained weights (loaded non-strictly, as the model may have grown layers in the process), the
Trainer's loop state (step, epoch, status, ``callback_metrics``...), the checkpoint callback's best and last
paths, and the call's result.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

import torch

from ...distributed.local_processes import start_local_processes

__all__ = ["one_fit_per_spawning_trainer", "run_in_local_processes"]


#: LoopState fields holding the worker's own loaders (and the closure that makes them): never sent back.
_PROCESS_LOCAL = frozenset({"data", "train_source"})
#: What the checkpoint callback of rank 0 knows that the one of this process should.
_CHECKPOINT_PATHS = ("best_model_path", "last_model_path", "best_model_score")


@contextlib.contextmanager
def one_fit_per_spawning_trainer(trainer: Any, strategy: Any, strategy_name: str) -> Iterator[None]:
    """Around a ``fit``: a second one of a Trainer whose strategy starts processes per call (``ddp_spawn``,
    ``ddp_fork``, ``ddp_notebook``, ``DDPStrategy(start_method="spawn")``) raises Lightning's
    ``NotImplementedError`` once a first one finished, on any number of devices (one device runs in this process
    here, but the rule follows the strategy, as Lightning's). Lightning's own limit, kept so that code written for
    it meets the same error and workaround."""
    spawning = getattr(strategy, "_start_method", "popen") != "popen"
    if spawning and getattr(trainer, "_fitted_with_spawning", False):
        raise NotImplementedError(
            f"Fitting one Trainer twice with strategy={strategy_name!r} (new processes for each call) is not "
            "supported: build a new Trainer and continue from a checkpoint with `trainer.fit(model, ckpt_path=...)`."
        )
    yield
    if spawning:
        trainer._fitted_with_spawning = True


def run_in_local_processes(
    trainer: Any,
    model: torch.nn.Module,
    work: Callable[[], Any],
    start_method: str,
    strategy_name: str,
) -> Any:
    """Run ``work`` (a fit, validate, test or predict) in one process per device; rank 0's result.

    ``model`` then holds rank 0's weights and ``trainer`` its loop state (step, epoch, metrics).
    """
    objects = {"trainer": trainer, "model": model, "work": work}
    outcome = start_local_processes(_run_rank, objects, trainer.num_devices, start_method, strategy_name=strategy_name)
    model.load_state_dict(outcome["weights"], strict=False)
    for name, value in outcome["state"].items():
        setattr(trainer.state, name, value)
    callback = trainer.checkpoint_callback
    if callback is not None:
        for name, value in outcome["checkpoint_paths"].items():
            setattr(callback, name, value)
    return outcome["result"]


def _run_rank(trainer: Any, model: torch.nn.Module, work: Callable[[], Any]) -> dict[str, Any] | None:
    """One rank: the work; rank 0's outcome (what the parent's objects take back), None elsewhere."""
    from ...distributed.rank_zero import set_rank

    set_rank(trainer.global_rank)  # the parent told rank_zero_only it was rank 0; this process may not be
    output = work()
    if os.environ.get("LOCAL_RANK") != "0":
        return None
    callback = trainer.checkpoint_callback
    paths = {name: getattr(callback, name) for name in _CHECKPOINT_PATHS if hasattr(callback, name)}
    weights = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    # The loop state comes back without what only makes sense in the worker (its loaders and what makes them).
    state = {k: v for k, v in vars(trainer.state).items() if k not in _PROCESS_LOCAL}
    return {"weights": weights, "state": state, "checkpoint_paths": paths, "result": output}
