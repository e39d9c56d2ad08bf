"""``lightning.fabric.plugins.environments.mpi``'s path (imports only)."""

from __future__ import annotations

from ....environments.mpi import MPIEnvironment

__all__ = ["MPIEnvironment"]
