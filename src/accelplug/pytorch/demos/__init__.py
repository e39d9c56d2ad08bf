"""``lightning.pytorch.demos``'s path (imports only)."""

from __future__ import annotations

from ..._import_paths import lazy_submodules
from ...demos import *  # noqa: F403 - the mirror follows whatever the module exports
from ...demos import __all__ as __all__

__getattr__ = lazy_submodules(__name__, ("boring_classes", "lstm", "transformer"))
