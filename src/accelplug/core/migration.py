"""Lightning's ``migrate_checkpoint``: the checkpoint room's upgrades, with the callbacks' classes for 0.10's keys.

The upgrade steps live in :mod:`accelplug.checkpoint.migration`; the one that moves ``ModelCheckpoint``'s and
``EarlyStopping``'s pre-0.10 state under ``callbacks`` keys it by the callback classes, which sit a layer above the
checkpoint room, so this module hands them in. The Trainer's resume and ``load_from_checkpoint`` upgrade every file
through :func:`upgrade_loaded`, which also says once how to make the upgrade permanent.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from ..callbacks.early_stopping import EarlyStopping
from ..callbacks.model_checkpoint import ModelCheckpoint
from ..checkpoint.file import FORMAT_KEY
from ..checkpoint.migration import VERSION_KEY, pl_legacy_patch, upgrade

__all__ = ["migrate_checkpoint", "pl_legacy_patch", "upgrade_loaded"]

_log = logging.getLogger(__name__)


def migrate_checkpoint(
    checkpoint: dict[str, Any], target_version: str | None = None
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """Upgrade ``checkpoint`` in place to the layout of the Lightning release accelplug follows (only the steps
    of releases up to ``target_version``, where given), and return it with the steps applied, by release.

    In place on purpose: a checkpoint can be too large to copy, and may hold objects that cannot be copied. A
    dictionary without ``"pytorch-lightning_version"`` raises a ``KeyError`` naming it, as Lightning's does.
    """
    return upgrade(checkpoint, {"ModelCheckpoint": ModelCheckpoint, "EarlyStopping": EarlyStopping}, target_version)


def upgrade_loaded(checkpoint: dict[str, Any], path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """A checkpoint just read from ``path``, upgraded; where steps were applied, an info log gives the command
    that upgrades the file itself. A dictionary that records no Lightning release (a plain ``torch.save`` of one) is
    refused with a ``KeyError`` naming the key, as Lightning refuses it; a file of accelplug's own format that
    records none (``fabric.save``'s) is returned as it is: it follows no release's layout to upgrade from."""
    if VERSION_KEY not in checkpoint and FORMAT_KEY in checkpoint:
        return checkpoint
    old = checkpoint.get(VERSION_KEY)  # none: migrate_checkpoint's KeyError names the key
    checkpoint, applied = migrate_checkpoint(checkpoint)
    if applied and path is not None:
        shown = _shown(path)
        _log.info(
            f"accelplug upgraded the checkpoint it loaded from Lightning v{old}'s layout to "
            f"v{checkpoint[VERSION_KEY]}'s. To upgrade the file itself, run "
            f"`python -m accelplug.pytorch.utilities.upgrade_checkpoint {shown}`"
        )
    return checkpoint


def _shown(path: str | os.PathLike[str]) -> str:
    """The path as the upgrade command takes it: relative to here where it can be (not a URL, same drive)."""
    text = os.fspath(path)
    if "://" in text:
        return text
    try:
        return os.path.relpath(text)
    except ValueError:  # another drive (Windows): no relative path exists
        return os.path.abspath(text)
