"""Which checkpoint a call resumes from: ``ckpt_path`` as a file, ``"last"``/``"auto"``/``"best"``, or a restart.

A restarted job resumes by itself; ``ckpt_path="auto"`` asks for the same explicitly.

``accelplug launch --max-restarts N`` (torchrun's elastic agent) starts the whole worker group again
after a failure, and tells the new workers so with ``TORCHELASTIC_RESTART_COUNT`` > 0. In such a
worker, ``fit`` called without ``ckpt_path`` behaves as ``ckpt_path="auto"``: it resumes from the
newest checkpoint of the run that verifies (the ``"last"`` rule, which searches every
``lightning_logs/version_N/checkpoints`` folder under ``default_root_dir`` and the checkpoint
callbacks' folders: each attempt's Trainer picks a fresh ``version_N``, so the previous attempt's files
are in another one), or trains from the start when there is none. One line says which.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from ...envvars import env_int
from ...errors import MisconfigurationException
from .format import checked_path, find_last_checkpoint

if TYPE_CHECKING:
    from ...strategies.base import Strategy

__all__ = ["RESTART_ENV", "announce_resume", "implied_ckpt_path", "resolve_ckpt_path", "restart_count"]

#: Set by torchrun's agent in every worker: 0 on the first attempt, then 1, 2, ... after each restart.
RESTART_ENV = "TORCHELASTIC_RESTART_COUNT"


def restart_count() -> int:
    """Which restart of the job this worker belongs to (0 outside torchrun and on the first attempt)."""
    return env_int(RESTART_ENV, 0, minimum=0)


def implied_ckpt_path(given: Any) -> tuple[Any, int]:
    """``(ckpt_path fit uses, restart count)``: the one given, else ``"auto"`` in a restarted worker."""
    if given is not None:
        return given, 0
    count = restart_count()
    return ("auto" if count else None), count


def announce_resume(trainer: Any, ckpt_path: Any, path: Path | str | None, restart: int) -> None:
    """One line on rank 0 when ``fit`` chose where to start by itself (a restart, or ``"auto"``)."""
    if restart:
        why = f"restart {restart} of this job ({RESTART_ENV}={restart})"
    elif isinstance(ckpt_path, str) and ckpt_path.strip().lower() == "auto":
        why = 'ckpt_path="auto"'
    else:
        return
    if not trainer.is_global_zero:
        return
    if path is not None:
        line = f"accelplug: {why}: resuming from {path} (step {trainer.global_step})."
    else:
        line = f"accelplug: {why}: no checkpoint under {trainer.default_root_dir} verifies; training from the start."
    print(line, file=sys.stderr, flush=True)


def resolve_ckpt_path(
    value: Any,
    device: torch.device,
    strategy: Strategy,
    *,
    folders: Callable[[], list[Path]],
    best: str | None,
) -> Path | str | None:
    """``ckpt_path`` as a file: a path, ``"last"`` (the newest checkpoint that verifies), ``"auto"`` (the
    same, or None to start fresh when there is none) or ``"best"`` (``best``, the checkpoint callback's).

    ``folders`` lists where checkpoints of this run may be (asked only for ``"last"``/``"auto"``).
    """
    if value is None:
        return None
    keyword = value.strip().lower() if isinstance(value, str) else None
    if keyword == "best":
        if not best:
            raise MisconfigurationException(
                "ckpt_path='best' needs a ModelCheckpoint(monitor=...) that has saved a best checkpoint; "
                "none has. Use ckpt_path='last' or a file path."
            )
        return Path(best)
    if keyword in ("last", "auto"):
        # Rank 0 looks and tells the others, so every rank resumes from the same file.
        found = find_last_checkpoint(folders(), device) if strategy.is_global_zero else None
        found = strategy.broadcast_object(found)
        if found is None and keyword == "last":
            looked = ", ".join(str(f) for f in folders()) or "none"
            raise MisconfigurationException(
                f"ckpt_path='last' found no checkpoint that verifies (looked in: {looked}). Train first, give "
                "the checkpoint's path, or use ckpt_path='auto' to start fresh when there is none."
            )
        return Path(found) if found is not None else None
    return checked_path(value)
