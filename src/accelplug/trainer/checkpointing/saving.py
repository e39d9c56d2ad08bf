"""``trainer.save_checkpoint``: one run's state handed to the strategy's ``checkpoint_io``, by the strategy.

Kept apart from the Trainer so that the class stays a list of Lightning's methods; the checks of what the
caller passed come first, before any rank builds or writes anything. The file is written by
``strategy.checkpoint_io`` (accelplug's atomic, checksummed ``TorchCheckpointIO`` unless ``plugins=`` or the
strategy named another), called as Lightning calls it: ``save_checkpoint(checkpoint, path,
storage_options=...)``, with the path in the type the caller gave (a ``str`` stays a ``str``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from ...checkpoint.file import is_url, refuse_urls
from ...errors import MisconfigurationException

if TYPE_CHECKING:
    from ...precision.base import NumericPrecision
    from ...strategies.base import Strategy
    from ...strategies.optimizers import OptimizerSetup
    from ..dispatch.hooks import HookDispatcher
    from ..state import LoopState
    from .contents import CheckpointSource

__all__ = ["connected_source", "save_run_checkpoint"]


@dataclass(frozen=True)
class _Connected:
    """A module connected by hand (``trainer.strategy.connect(model)``), seen as a run that has not started: loop
    position zero, no optimizers yet (Lightning saves ``optimizer_states=[]`` there), the Trainer's callbacks."""

    state: LoopState
    strategy: Strategy
    module: torch.nn.Module
    hooks: HookDispatcher
    datamodule: Any
    precision: NumericPrecision
    optim: OptimizerSetup | None = None


def connected_source(trainer: Any, module: torch.nn.Module) -> CheckpointSource:
    """What :func:`save_run_checkpoint` reads, for ``module`` connected to ``trainer``'s strategy before any call
    (Lightning 2.6 saves it: the checkpoint of a run at its start)."""
    from ..dispatch.hooks import HookDispatcher

    hooks = HookDispatcher(trainer, module, list(trainer.callbacks), datamodule=trainer.datamodule)
    return _Connected(
        trainer.state, trainer.strategy, module, hooks, trainer.datamodule, trainer.precision_plugin, None
    )


def save_run_checkpoint(
    run: CheckpointSource, strategy: Strategy, filepath: Any, weights_only: bool | None, storage_options: Any
) -> Path | str:
    """Write ``run``'s checkpoint (without optimizer and scheduler states when ``weights_only``) to ``filepath``;
    every rank calls this and waits for the others, rank 0 writes. Returns the resolved path, or the URL."""
    path = filepath
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path) or "\x00" in os.fspath(path):
        raise MisconfigurationException(f"save_checkpoint({path!r}): expected a file path (str or Path).")
    from .contents import build_checkpoint  # loaded at the first save

    checkpoint = build_checkpoint(run)
    if weights_only:
        checkpoint = {k: v for k, v in checkpoint.items() if k not in ("optimizer_states", "lr_schedulers")}
    if is_url(path):
        return _save_to_url(strategy, checkpoint, os.fspath(path), storage_options)
    refuse_urls(path)  # a URL already turned into a local "s3:/b" folder by Path()
    target = Path(os.path.expanduser(os.fspath(path).removeprefix("file://"))).resolve()
    try:
        strategy.save_checkpoint(checkpoint, target, _writer(strategy, storage_options, as_str=isinstance(path, str)))
    finally:
        strategy.barrier()  # also after a failed write: the other ranks wait here
    return target


def _writer(strategy: Strategy, storage_options: Any, *, as_str: bool) -> Callable[[dict[str, Any], Path], None]:
    """The ``write`` the strategy calls: its ``checkpoint_io``, given the path as the caller's type."""
    io = strategy.checkpoint_io

    def write(checkpoint: dict[str, Any], target: Path) -> None:
        io.save_checkpoint(checkpoint, str(target) if as_str else target, storage_options=storage_options)

    return write


def _save_to_url(strategy: Strategy, checkpoint: dict[str, Any], url: str, storage_options: Any) -> str:
    """One upload by rank 0 (the strategies' sharded saves need a local folder, so they refuse a URL)."""
    from ...strategies.base import Strategy

    if type(strategy).save_checkpoint is not Strategy.save_checkpoint:
        raise MisconfigurationException(
            f"save_checkpoint({url!r}): the {type(strategy).__name__} saves sharded checkpoints, which are "
            "written to local or mounted folders only; give a local path."
        )
    try:
        if strategy.writes_checkpoints:
            strategy.checkpoint_io.save_checkpoint(checkpoint, url, storage_options=storage_options)
    finally:
        strategy.barrier()
    return url
