"""``lightning.fabric.plugins.environments.torchelastic``'s path (imports only)."""

from __future__ import annotations

from ....environments.torchelastic import TorchElasticEnvironment

__all__ = ["TorchElasticEnvironment"]
