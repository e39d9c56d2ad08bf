"""``lightning.fabric.utilities.types``'s path (imports only)."""

from __future__ import annotations

from ...core.types import (  # noqa: F401 - Lightning's underscored aliases, which libraries import
    _DEVICE,
    _MAP_LOCATION_TYPE,
    _PARAMETERS,
    _PATH,
    CollectibleGroup,
    Optimizable,
    Steppable,
    UntypedStorage,
    _Stateful,
)

__all__ = ["CollectibleGroup", "Optimizable", "Steppable", "UntypedStorage"]
