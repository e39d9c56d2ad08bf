"""``lightning.pytorch.plugins.io``'s path (imports only)."""

from __future__ import annotations

from ...._import_paths import lazy_submodules
from ....checkpoint import AsyncCheckpointIO, CheckpointIO, TorchCheckpointIO

__all__ = ["AsyncCheckpointIO", "CheckpointIO", "TorchCheckpointIO", "XLACheckpointIO"]

__getattr__ = lazy_submodules(
    __name__,
    ("async_plugin", "checkpoint_plugin", "torch_plugin", "xla_plugin"),
    {"XLACheckpointIO": "accelplug.backends"},
)
