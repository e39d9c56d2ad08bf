"""``accelplug.plugins``: what Lightning's ``plugins=`` argument takes, at Lightning's import paths.

``accelplug.plugins.environments`` holds the cluster environments (Lightning's
``lightning.pytorch.plugins.environments``); ``accelplug.plugins.io`` the checkpoint writers (Lightning's
``lightning.pytorch.plugins.io``), also exported here: ``Trainer(plugins=[AsyncCheckpointIO()])``.
"""

from __future__ import annotations

from ..checkpoint_plugins import AsyncCheckpointIO, CheckpointIO, TorchCheckpointIO

__all__ = ["AsyncCheckpointIO", "CheckpointIO", "TorchCheckpointIO"]
