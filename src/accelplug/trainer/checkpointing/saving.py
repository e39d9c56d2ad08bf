"""``trainer.save_checkpoint``: one run's state written to a local file or an fsspec URL, by the strategy.

Kept apart from the Trainer so that the class stays a list of Lightning's methods; the checks of what the
caller passed come first, before any rank builds or writes anything.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...checkpoint_io import atomic_save, is_url, refuse_urls
from ...errors import MisconfigurationException
from .contents import build_checkpoint

if TYPE_CHECKING:
    from ...strategies.base import Strategy
    from ..run import Run

__all__ = ["save_run_checkpoint"]


def save_run_checkpoint(
    run: Run, strategy: Strategy, filepath: Any, weights_only: bool | None, storage_options: Any
) -> Path | str:
    """Write ``run``'s checkpoint (without optimizer and scheduler states when ``weights_only``) to ``filepath``;
    every rank calls this and waits for the others, rank 0 writes. Returns the resolved path, or the URL."""
    path = filepath
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path) or "\x00" in os.fspath(path):
        raise MisconfigurationException(f"save_checkpoint({path!r}): expected a file path (str or Path).")
    if storage_options is not None:
        raise MisconfigurationException(
            f"save_checkpoint(storage_options={storage_options!r}): the Trainer takes no storage options (a URL's "
            "filesystem reads its credentials from fsspec's configuration and the environment); leave it None."
        )
    checkpoint = build_checkpoint(run)
    if weights_only:
        checkpoint = {k: v for k, v in checkpoint.items() if k not in ("optimizer_states", "lr_schedulers")}
    if is_url(path):
        return _save_to_url(strategy, checkpoint, os.fspath(path))
    refuse_urls(path)  # a URL already turned into a local "s3:/b" folder by Path()
    target = Path(os.fspath(path).removeprefix("file://")).expanduser().resolve()
    try:
        strategy.save_checkpoint(checkpoint, target, atomic_save)
    finally:
        strategy.barrier()  # also after a failed write: the other ranks wait here
    return target


def _save_to_url(strategy: Strategy, checkpoint: dict[str, Any], url: str) -> str:
    """One upload by rank 0 (the strategies' sharded saves need a local folder, so they refuse a URL)."""
    from ...strategies.base import Strategy

    if type(strategy).save_checkpoint is not Strategy.save_checkpoint:
        raise MisconfigurationException(
            f"save_checkpoint({url!r}): the {type(strategy).__name__} saves sharded checkpoints, which are "
            "written to local or mounted folders only; give a local path."
        )
    try:
        if strategy.writes_checkpoints:
            atomic_save(checkpoint, url)
    finally:
        strategy.barrier()
    return url
