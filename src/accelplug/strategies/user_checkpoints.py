"""A user's state saved and loaded by the strategy: what ``fabric.save``, ``load`` and ``load_raw`` run.

Lightning Fabric hands these calls to its strategy (``strategy.save_checkpoint(path=..., state=..., filter=...)``,
``strategy.load_checkpoint(path=..., state=..., strict=..., weights_only=...)``), so a strategy or a ``CheckpointIO``
that stores checkpoints elsewhere sees the call before any file is looked at; accelplug's :class:`Strategy` runs
the functions here for both (Fabric has unwrapped its objects first).

A Fabric checkpoint is the user's dictionary with modules and optimizers replaced by their states, in the
one accelplug container (:mod:`accelplug.checkpoint.file`): written atomically by one process, carrying a
format version and a SHA-256 digest that loading verifies. The user's keys stay at the top level, so Lightning
Fabric's ``fabric.load`` reads an accelplug Fabric checkpoint (it returns the two extra keys in its remainder),
and ``load`` here reads Lightning Fabric's files and plain ``torch.save`` dictionaries (which carry no digest).

Module and optimizer states come from the strategy, which gathers or shards them: under FSDP with
``state_dict_type="sharded"`` they are saved by every process with ``torch.distributed.checkpoint`` into a
folder beside the file, and loading reshards them to this run (any number of processes, one included).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import torch

from ..checkpoint.file import CHECKPOINT_FORMAT, DIGEST_KEY, FORMAT_KEY, resolve_weights_only
from ..checkpoint.wrapping import is_own_io
from ..errors import CheckpointNotFoundError, MisconfigurationException
from .state_dicts import SHARDED_KEY, load_sharded_entries, shard_folder

#: :class:`accelplug.strategies.base.Strategy`, which calls this module (so not imported here: no cycle).
Strategy = Any

__all__ = ["load", "load_raw", "save"]

_CONTAINER_KEYS = (FORMAT_KEY, DIGEST_KEY, SHARDED_KEY)


def _stateful(obj: object) -> bool:
    return callable(getattr(obj, "state_dict", None)) and callable(getattr(obj, "load_state_dict", None))


def _owner(optimizer: torch.optim.Optimizer, modules: Mapping[str, torch.nn.Module]) -> torch.nn.Module | None:
    """The module among ``modules`` whose parameters ``optimizer`` steps."""
    stepped = {id(p) for group in optimizer.param_groups for p in group["params"]}
    for module in modules.values():
        if any(id(p) in stepped for p in module.parameters()):
            return module
    return None


def _file_path(path: object, what: str) -> Path:
    if not isinstance(path, (str, os.PathLike)) or isinstance(path, bytes) or not os.fspath(path):
        raise MisconfigurationException(f"{what}(path={path!r}): expected a file path (str or Path).")
    text = os.fspath(path)
    if not isinstance(text, str) or not text.strip() or "\x00" in text:
        raise MisconfigurationException(f"{what}(path={path!r}) is not a usable file path.")
    return Path(os.path.expanduser(text))


class _BadFilterType(MisconfigurationException, TypeError):
    """``filter`` is not a dict of callables (Lightning raises a ``TypeError``)."""


class _MissingStateKey(MisconfigurationException, KeyError):
    """A strict load asks for a key the checkpoint lacks: Lightning raises a ``KeyError``, which code written for
    it catches; the message stays a plain sentence (a ``KeyError`` would quote it)."""

    __str__ = BaseException.__str__


def _check_filter(filter: Any, state: Mapping[str, Any]) -> dict[str, Callable[[str, Any], bool]]:
    if filter is None:
        return {}
    if not isinstance(filter, dict):
        raise _BadFilterType(
            f"Filter should be a dictionary, given {filter!r}: fabric.save(filter=...) maps state keys to callables "
            "(name, value) -> bool."
        )
    missing = set(filter) - set(state)
    if missing:
        raise MisconfigurationException(
            f"The filter keys {missing} are not present in the state keys {set(state)}: fabric.save(filter=...) "
            "filters entries of the state it saves."
        )
    for key, check in filter.items():
        if not callable(check):
            raise _BadFilterType(
                f"Expected `fabric.save(filter=...)` for key {key!r} to be a callable, given {check!r}: each filter "
                "is a callable (name, value) -> bool."
            )
    return filter


def save(
    strategy: Strategy,
    path: object,
    state: object,
    filter: Any = None,
    storage_options: Any = None,
    *,
    keys_by_name: bool = False,
) -> None:
    """Every process calls this; the strategy decides who writes (one writer, or every rank's shards). An entry
    whose filter keeps nothing is left out, as in Lightning."""
    if not isinstance(state, Mapping):
        raise MisconfigurationException(
            f"fabric.save(state={state!r}): expected a dict such as {{'model': model, 'optimizer': optimizer}}."
        )
    target = _file_path(path, "fabric.save")
    filters = _check_filter(filter, state)
    sharded = getattr(strategy, "state_dict_type", None) == "sharded"
    if filters and sharded:
        raise MisconfigurationException(
            "fabric.save(filter=...) cannot filter a sharded checkpoint (torch.distributed.checkpoint loads only "
            "whole states); use FSDPStrategy(state_dict_type='full') to save filtered states."
        )
    target = Path(strategy.broadcast_object(str(target.resolve())))  # rank 0's path, also for a relative one
    objects = dict(state)
    modules = {k: v for k, v in objects.items() if isinstance(v, torch.nn.Module)}
    io = strategy.checkpoint_io
    # accelplug's file format is its own writer's; another writer gets the user's entries only, as in Lightning
    own_format = _own_writer(io)
    checkpoint: dict[str, Any] = {FORMAT_KEY: CHECKPOINT_FORMAT} if own_format else {}
    tensor_keys: list[str] = []
    for key, obj in objects.items():
        if isinstance(obj, torch.nn.Module):
            converted = strategy.module_state_dict(obj)
            tensor_keys.append(key)
        elif isinstance(obj, torch.optim.Optimizer):
            converted = _optimizer_state(strategy, key, obj, modules, keys_by_name)
            tensor_keys.append(key)
        elif _stateful(obj):
            converted = obj.state_dict()
        else:
            converted = obj
        if key in filters and isinstance(converted, dict):
            converted = {k: v for k, v in converted.items() if filters[key](k, v)}
            if not converted:
                continue
        checkpoint[key] = converted
    given = None if own_format else path  # a writer of the user's gets the path as the user wrote it
    writer = _writer(io, storage_options, given)
    strategy.save_checkpoint(checkpoint, target, writer, tensor_keys=tuple(tensor_keys))


def _own_writer(io: object) -> bool:
    """Whether ``io`` is accelplug's writer (local files and URLs it checks itself), not one of the user's."""
    return is_own_io(io)


def _writer(io: Any, storage_options: Any, given: object) -> Callable[[dict[str, Any], Path], None]:
    """The file is written by the strategy's ``checkpoint_io`` (accelplug's atomic, checksummed one by default),
    called with Lightning's keywords."""

    def write(checkpoint: dict[str, Any], target: Path) -> None:
        path = target if given is None else given
        io.save_checkpoint(checkpoint=checkpoint, path=path, storage_options=storage_options)

    return write


def _optimizer_state(
    strategy: Strategy,
    key: str,
    optimizer: torch.optim.Optimizer,
    modules: Mapping[str, torch.nn.Module],
    keys_by_name: bool,
) -> dict[str, Any]:
    """The optimizer's state as the strategy saves it; ``keys_by_name``: the strategy keys it by parameter name
    (it overrides ``optimizer_state_dict``), so it needs the optimizer's module in the state."""
    owner = _owner(optimizer, modules)
    if owner is not None:
        saved: dict[str, Any] = strategy.optimizer_state_dict(owner, optimizer)
        return saved
    if keys_by_name:
        raise MisconfigurationException(
            f"fabric.save: the optimizer under {key!r} steps parameters of no module in the state, and strategy "
            f"{strategy.name!r} saves optimizer states by parameter name; save it with its model: "
            f"state={{'model': model, {key!r}: optimizer, ...}}."
        )
    return optimizer.state_dict()


def _read(strategy: Strategy, path: object, what: str, weights_only: bool | None) -> tuple[Path, Any]:
    target = _file_path(path, what)
    io = strategy.checkpoint_io
    if not _own_writer(io):  # the user's reader may read from elsewhere: it gets the path as given
        return target, io.load_checkpoint(path, weights_only=weights_only)  # Lightning's call: no map_location
    if not target.exists():
        raise CheckpointNotFoundError(
            f"Checkpoint file not found: {target} ({what}: no such file at {target.resolve()})."
        )
    if target.is_dir():
        raise MisconfigurationException(
            f"{what}(path={str(path)!r}) is a folder; accelplug checkpoints are one file (a sharded one names its "
            "shard folder inside). A Lightning Fabric sharded checkpoint folder cannot be read here: save it with "
            "state_dict_type='full'."
        )
    if target.stat().st_size == 0:
        raise MisconfigurationException(f"{what}(path={str(path)!r}) is empty (0 bytes): a save that never completed?")
    loaded = strategy.checkpoint_io.load_checkpoint(
        target,
        map_location=strategy.checkpoint_map_location(),
        weights_only=resolve_weights_only(weights_only),
    )
    return target, loaded


def load(
    strategy: Strategy,
    path: object,
    state: dict[str, Any] | None,
    strict: bool = True,
    weights_only: bool | None = None,
) -> dict[str, Any]:
    """Restore ``state``'s objects in place; the checkpoint's other entries are returned (all of it without state)."""
    target, checkpoint = _read(strategy, path, "fabric.load", weights_only)
    shown = str(target)
    if not isinstance(checkpoint, dict):
        raise MisconfigurationException(
            f"fabric.load(path={shown!r}) holds a {type(checkpoint).__name__}, not a checkpoint dict; load a raw "
            "module or optimizer state with fabric.load_raw(path, obj)."
        )
    sharded = checkpoint.get(SHARDED_KEY)
    if not state:
        if sharded is not None:
            raise MisconfigurationException(
                f"fabric.load(path={shown!r}) is a sharded checkpoint: pass the objects to load the shards into, "
                "state={'model': model, 'optimizer': optimizer, ...}."
            )
        return _remainder(checkpoint)
    if not isinstance(state, dict):
        raise MisconfigurationException(
            f"fabric.load(state={state!r}): expected a dict such as {{'model': model, 'optimizer': optimizer}}."
        )
    in_shards = set(sharded.get("keys", ())) if sharded is not None else set()
    available = (set(checkpoint) | in_shards) - set(_CONTAINER_KEYS)
    missing = [key for key in state if key not in available]
    if strict and missing:
        raise _MissingStateKey(
            f"The requested state contains a key {missing[0]!r} that does not exist in the loaded checkpoint "
            f"{shown!r} (it holds {sorted(available)}). To disable strict loading, set `strict=False`."
        )
    objects = dict(state)
    modules = {k: v for k, v in objects.items() if isinstance(v, torch.nn.Module)}
    if sharded is not None and in_shards:
        _load_shards(target, sharded, objects, modules, in_shards, strict)
    for key, obj in objects.items():
        if key not in checkpoint or key in in_shards:
            continue
        value = checkpoint.pop(key)
        try:
            if isinstance(obj, torch.nn.Module):
                strategy.load_module_state_dict(obj, value, strict=strict)
            elif isinstance(obj, torch.optim.Optimizer):
                owner = _owner(obj, modules)
                if owner is not None:
                    strategy.load_optimizer_state_dict(owner, obj, value)
                else:
                    obj.load_state_dict(value)
            elif _stateful(obj):
                obj.load_state_dict(value)
            else:
                state[key] = value
        except (RuntimeError, KeyError, ValueError) as exc:
            if isinstance(exc, MisconfigurationException):
                raise
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise MisconfigurationException(
                f"fabric.load(path={shown!r}): the entry {key!r} does not fit {type(obj).__name__}: {first}"
            ) from None
    return _remainder(checkpoint)


def _load_shards(
    target: Path,
    sharded: dict[str, Any],
    objects: dict[str, Any],
    modules: dict[str, torch.nn.Module],
    in_shards: set[str],
    strict: bool,
) -> None:
    folder = shard_folder(target, sharded)
    if not folder.is_dir():
        raise MisconfigurationException(
            f"fabric.load(path={str(target)!r}) is a sharded checkpoint whose shard folder {folder} is missing; copy "
            "the folder along with the file."
        )
    entries = {
        k: v for k, v in objects.items() if k in in_shards and isinstance(v, (torch.nn.Module, torch.optim.Optimizer))
    }
    shard_modules = [v for v in entries.values() if isinstance(v, torch.nn.Module)]
    owners = {id(_owner(v, modules)) for v in entries.values() if isinstance(v, torch.optim.Optimizer)}
    if len(shard_modules) > 1 or len(owners - {id(m) for m in shard_modules}) > 0 or not shard_modules:
        raise MisconfigurationException(
            f"fabric.load(path={str(target)!r}) is a sharded checkpoint: load it with exactly one model and the "
            "optimizers that step it, state={'model': model, 'optimizer': optimizer, ...}."
        )
    try:
        load_sharded_entries(folder, shard_modules[0], entries, strict=strict)
    except (RuntimeError, KeyError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise MisconfigurationException(f"fabric.load(path={str(target)!r}): the shards do not fit: {first}") from None


def _remainder(checkpoint: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in checkpoint.items() if k not in _CONTAINER_KEYS}


def load_raw(strategy: Strategy, path: object, obj: Any, strict: bool = True, weights_only: bool | None = None) -> None:
    """A module's or optimizer's state saved as a plain ``torch.save(x.state_dict())`` loaded into ``obj``."""
    target = obj
    if not isinstance(target, (torch.nn.Module, torch.optim.Optimizer)):
        raise MisconfigurationException(
            f"fabric.load_raw(obj={obj!r}): expected a module or an optimizer to load the state into."
        )
    shown, raw = _read(strategy, path, "fabric.load_raw", weights_only)
    if isinstance(raw, dict):
        raw = _remainder(raw)
    try:
        if isinstance(target, torch.nn.Module):
            strategy.load_module_state_dict(target, raw, strict=strict)
        else:
            target.load_state_dict(raw)
    except (RuntimeError, KeyError, ValueError) as exc:
        if isinstance(exc, MisconfigurationException):
            raise
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise MisconfigurationException(
            f"fabric.load_raw(path={str(shown)!r}) does not fit {type(target).__name__}: {first}"
        ) from None
