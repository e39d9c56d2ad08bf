"""Checkpoint tensors in the two forms a sharding strategy adds, on torch's own machinery.

- **Optimizer state keyed by parameter name** (``{"state": {"layer.weight": {...}}, ...}``), the form
  ``torch.distributed.checkpoint.state_dict`` gathers for a sharded model. It loads into any run,
  sharded or not, through ``set_optimizer_state_dict``; a state keyed by position (what
  ``optimizer.state_dict()`` gives on one device or under DDP) is renamed here so it loads into a
  sharded run too.
- **Sharded checkpoints**: the module's and optimizers' tensors saved by every process with
  ``torch.distributed.checkpoint`` (DCP) into a folder next to the checkpoint file, which keeps
  everything else (loop position, RNG, callbacks) and names the folder. The folder's name carries a
  fresh token, so the file (replaced atomically, last) always names a complete folder: a crash while
  saving leaves the previous file and its folder intact. DCP reshards on load, so a checkpoint saved by
  N processes resumes on M (also on one process without a process group).
"""

from __future__ import annotations

import contextlib
import glob
import shutil
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import torch

__all__ = [
    "SHARDED_KEY",
    "Ranks",
    "keyed_by_name",
    "load_named_optimizer_state",
    "load_sharded",
    "load_sharded_entries",
    "named_optimizer_state",
    "remove_checkpoint_files",
    "remove_shard_folders",
    "save_sharded",
]


class Ranks(Protocol):
    """What saving shards asks of the strategy: agree on a folder, wait for each other, who writes the file."""

    @property
    def world_size(self) -> int: ...

    @property
    def writes_checkpoints(self) -> bool: ...

    def broadcast_object(self, obj: Any) -> Any: ...

    def barrier(self) -> None: ...


#: Checkpoint key naming the shard folder (relative to the checkpoint file) and who saved it.
SHARDED_KEY = "sharded_state"
_SUFFIX = ".shards-"


# ---- optimizer state keyed by parameter name -------------------------------------------------------
def keyed_by_name(state: dict[str, Any]) -> bool:
    """Whether an optimizer state names its parameters (torch.distributed.checkpoint's form)."""
    groups = state.get("param_groups") or []
    params = [p for group in groups for p in group.get("params", [])]
    return bool(params) and all(isinstance(p, str) for p in params)


def named_optimizer_state(
    module: torch.nn.Module, optimizer: torch.optim.Optimizer, state: dict[str, Any]
) -> dict[str, Any]:
    """A position-keyed ``optimizer.state_dict()`` renamed to parameter names (written by hand: torch's
    ``set_optimizer_state_dict`` accepts only names, and positions map to names through the optimizer's
    own parameter order, which is the order ``optimizer.state_dict()`` numbers them in)."""
    names = {id(p): n for n, p in module.named_parameters(remove_duplicate=False)}
    order = [names.get(id(p), str(i)) for i, p in enumerate(p for g in optimizer.param_groups for p in g["params"])]

    def name(index: Any) -> Any:
        return order[index] if isinstance(index, int) and 0 <= index < len(order) else index

    return {
        "state": {name(k): v for k, v in state.get("state", {}).items()},
        "param_groups": [{**g, "params": [name(i) for i in g["params"]]} for g in state.get("param_groups", [])],
    }


def load_named_optimizer_state(
    module: torch.nn.Module, optimizer: torch.optim.Optimizer, state: dict[str, Any]
) -> None:
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_optimizer_state_dict

    set_optimizer_state_dict(module, optimizer, state, options=StateDictOptions(full_state_dict=True))


# ---- sharded checkpoints ---------------------------------------------------------------------------
def save_sharded(
    strategy: Ranks,
    checkpoint: dict[str, Any],
    path: Path,
    write: Callable[[dict[str, Any], Path], object],
    *,
    tensor_keys: tuple[str, ...] = ("state_dict", "optimizer_states"),
) -> None:
    """Save the entries ``tensor_keys`` names with DCP (every process), then the rest as the file (one process).

    The Trainer's entries are ``state_dict`` and ``optimizer_states`` (a list, saved keyed by position);
    Fabric names the keys the user gave its module and optimizers.
    """
    from torch.distributed.checkpoint.state_dict_saver import save

    token = strategy.broadcast_object(uuid.uuid4().hex[:12])  # every rank writes into the same new folder
    folder = path.parent / f"{path.name}{_SUFFIX}{token}"
    tensors: dict[str, Any] = {}
    for key in tensor_keys:
        if key in checkpoint:
            value = checkpoint[key]
            tensors[key] = {str(i): s for i, s in enumerate(value)} if isinstance(value, list) else value
    save(tensors, checkpoint_id=folder)
    strategy.barrier()
    meta = {k: v for k, v in checkpoint.items() if k not in tensors}
    if "state_dict" in tensors:
        meta["state_dict"] = {}
    meta[SHARDED_KEY] = {
        "folder": folder.name,
        "world_size": strategy.world_size,
        "optimizers": len(checkpoint.get("optimizer_states", [])) if "optimizer_states" in checkpoint else None,
        "keys": sorted(tensors),
    }
    if strategy.writes_checkpoints:
        write(meta, path)
        _remove_other_shards(path, keep=folder)


def load_sharded(module: torch.nn.Module, optimizers: list[torch.optim.Optimizer], folder: Path) -> None:
    """Load DCP-saved tensors into ``module`` (and ``optimizers``), resharded to this run's layout."""
    from torch.distributed.checkpoint.state_dict import (
        get_model_state_dict,
        get_optimizer_state_dict,
        set_model_state_dict,
        set_optimizer_state_dict,
    )
    from torch.distributed.checkpoint.state_dict_loader import load

    state: dict[str, Any] = {"state_dict": get_model_state_dict(module)}
    if optimizers:
        state["optimizer_states"] = {str(i): get_optimizer_state_dict(module, o) for i, o in enumerate(optimizers)}
    load(state, checkpoint_id=folder)
    set_model_state_dict(module, state["state_dict"])
    for index, optimizer in enumerate(optimizers):
        set_optimizer_state_dict(module, optimizer, state["optimizer_states"][str(index)])


def load_sharded_entries(
    folder: Path,
    module: torch.nn.Module,
    entries: dict[str, torch.nn.Module | torch.optim.Optimizer],
    *,
    strict: bool = True,
) -> None:
    """Load the DCP-saved entries named by ``entries``' keys into its module and optimizers (Fabric's layout:
    one top-level key per object), resharded to this run; ``module`` is the one the optimizers step."""
    from torch.distributed.checkpoint.state_dict import (
        StateDictOptions,
        get_model_state_dict,
        get_optimizer_state_dict,
        set_model_state_dict,
        set_optimizer_state_dict,
    )
    from torch.distributed.checkpoint.state_dict_loader import load

    state: dict[str, Any] = {}
    for key, target in entries.items():
        if isinstance(target, torch.nn.Module):
            state[key] = get_model_state_dict(target)
        else:
            state[key] = get_optimizer_state_dict(module, target)
    with warnings.catch_warnings():
        # Without a process group torch says it "assumes" one process loads: that is what is meant here.
        warnings.filterwarnings("ignore", message="torch.distributed is disabled", category=UserWarning)
        load(state, checkpoint_id=folder)
    for key, target in entries.items():
        if isinstance(target, torch.nn.Module):
            set_model_state_dict(target, state[key], options=StateDictOptions(strict=strict))
        else:
            set_optimizer_state_dict(module, target, state[key])


def shard_folder(path: Path, sharded: dict[str, Any]) -> Path:
    """The shard folder a checkpoint file names (it lies beside the file)."""
    return path.parent / str(sharded["folder"])


def remove_checkpoint_files(path: Path) -> None:
    """Delete a checkpoint file and its shard folders."""
    with contextlib.suppress(OSError):
        path.unlink()
    remove_shard_folders(path)


def remove_shard_folders(path: Path) -> None:
    """Delete the shard folders saved beside the checkpoint file ``path`` (none for an unsharded one)."""
    _remove_other_shards(path, keep=None)


def _remove_other_shards(path: Path, keep: Path | None) -> None:
    """Shard folders of ``path`` other than ``keep``: left by the save this one replaced, or by a crash."""
    with contextlib.suppress(OSError):
        for folder in path.parent.glob(f"{glob.escape(path.name)}{_SUFFIX}*"):
            if folder != keep and folder.is_dir():
                shutil.rmtree(folder, ignore_errors=True)
