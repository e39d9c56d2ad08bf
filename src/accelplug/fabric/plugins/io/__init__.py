"""``lightning.fabric.plugins.io``'s path (imports only)."""

from __future__ import annotations

from ...._import_paths import lazy_submodules
from ....backends import XLACheckpointIO
from ....checkpoint import CheckpointIO, TorchCheckpointIO

__all__ = ["CheckpointIO", "TorchCheckpointIO", "XLACheckpointIO"]

__getattr__ = lazy_submodules(__name__, ("checkpoint_io", "torch_io", "xla"))
