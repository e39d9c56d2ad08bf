"""Which checkpoints a tracker should upload after a save, with the metadata and aliases Lightning sends.

A tracker logger with ``log_model`` reads the ``ModelCheckpoint``'s own bookkeeping rather than the
file it was just told about, because one save can change several things at once: a new best, a
refreshed ``last.ckpt``, a file leaving the top k. The callback is read through these attributes only
(Lightning's ``ModelCheckpoint`` and accelplug's both have them; any object with them works):

- ``last_model_path`` with ``current_score`` (tagged "latest"),
- ``best_model_path`` with ``best_model_score`` (tagged "best"),
- ``best_k_models`` (path to score, tagged "best_k"),
- ``monitor``, ``mode``, ``save_last``, ``save_top_k``, ``save_weights_only``, ``_every_n_train_steps``
  for the metadata (each only when present).

A file is uploaded again only when it changed since its last upload (its mtime grew): ``last.ckpt``
keeps its name but not its content.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "CHECKPOINT_METADATA_KEYS",
    "PendingCheckpoint",
    "aliases",
    "metadata",
    "pending_checkpoints",
    "score_value",
    "uploads_now",
]

#: The callback settings recorded with each checkpoint, as Lightning's W&B logger records them
#: (MLflow's adds ``_every_n_val_epochs``, which Lightning 2.6's ModelCheckpoint no longer has).
CHECKPOINT_METADATA_KEYS = ("monitor", "mode", "save_last", "save_top_k", "save_weights_only", "_every_n_train_steps")


@dataclass(frozen=True, order=True)
class PendingCheckpoint:
    """A checkpoint file to upload: when it was written, where, its score and why it is listed."""

    mtime: float
    path: str
    score: Any
    tag: str


def _path_text(path: Any) -> str:
    return os.fspath(path) if path else ""


def pending_checkpoints(checkpoint_callback: Any, uploaded: dict[str, float]) -> list[PendingCheckpoint]:
    """The callback's checkpoints not uploaded yet, or changed since, oldest first.

    ``uploaded`` maps a path to the mtime it had when it was uploaded; the caller updates it after each
    upload. Paths that no longer exist (removed from the top k) are skipped.
    """
    found: dict[str, tuple[Any, str]] = {}
    if hasattr(checkpoint_callback, "last_model_path") and hasattr(checkpoint_callback, "current_score"):
        found[_path_text(checkpoint_callback.last_model_path)] = (checkpoint_callback.current_score, "latest")
    if hasattr(checkpoint_callback, "best_model_path") and hasattr(checkpoint_callback, "best_model_score"):
        found[_path_text(checkpoint_callback.best_model_path)] = (checkpoint_callback.best_model_score, "best")
    for path, score in getattr(checkpoint_callback, "best_k_models", {}).items():
        found[_path_text(path)] = (score, "best_k")
    pending = []
    for path, (score, tag) in found.items():
        if not path or not Path(path).is_file():
            continue
        mtime = Path(path).stat().st_mtime
        if path in uploaded and uploaded[path] >= mtime:
            continue
        pending.append(PendingCheckpoint(mtime, path, score, tag))
    return sorted(pending, key=lambda item: (item.mtime, item.path))


def score_value(score: Any) -> Any:
    """A tensor score as a Python number (trackers store JSON/YAML); other values unchanged."""
    item = getattr(score, "item", None)
    return item() if callable(item) else score


def metadata(
    checkpoint_callback: Any,
    checkpoint: PendingCheckpoint,
    section: str,
    keys: tuple[str, ...] = CHECKPOINT_METADATA_KEYS,
) -> dict[str, Any]:
    """``{"score", "original_filename", section: {callback settings}}``, Lightning's checkpoint metadata."""
    return {
        "score": score_value(checkpoint.score),
        "original_filename": Path(checkpoint.path).name,
        section: {key: getattr(checkpoint_callback, key) for key in keys if hasattr(checkpoint_callback, key)},
    }


def aliases(checkpoint_callback: Any, checkpoint: PendingCheckpoint) -> list[str]:
    """``["latest", "best"]`` for the callback's best checkpoint, ``["latest"]`` for any other."""
    best = _path_text(getattr(checkpoint_callback, "best_model_path", ""))
    return ["latest", "best"] if best and checkpoint.path == best else ["latest"]


def uploads_now(log_model: Any, checkpoint_callback: Any) -> bool:
    """Whether ``after_save_checkpoint`` uploads at once (``"all"``, or True with ``save_top_k=-1``).

    Otherwise ``log_model=True`` waits for the end of training, when only the survivors are uploaded.
    """
    return log_model == "all" or (log_model is True and getattr(checkpoint_callback, "save_top_k", None) == -1)
