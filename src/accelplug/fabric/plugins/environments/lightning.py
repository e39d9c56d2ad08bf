"""``lightning.fabric.plugins.environments.lightning``'s path (imports only)."""

from __future__ import annotations

from ....environments.lightning import LightningEnvironment, find_free_network_port

__all__ = ["LightningEnvironment", "find_free_network_port"]
