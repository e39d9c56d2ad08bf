"""Lightning's ``plugins.io`` path: the checkpoint writers a strategy saves through.

``from accelplug.plugins.io import AsyncCheckpointIO`` as with Lightning; the classes live in
:mod:`accelplug.checkpoint`.
"""

from __future__ import annotations

from ..checkpoint import AsyncCheckpointIO, CheckpointIO, TorchCheckpointIO

__all__ = ["AsyncCheckpointIO", "CheckpointIO", "TorchCheckpointIO"]
