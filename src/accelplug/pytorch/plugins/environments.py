"""``lightning.pytorch.plugins.environments``'s path: the cluster environments of :mod:`accelplug.plugins`, and
``XLAEnvironment`` (the XLA plugin's class, or a stand-in naming it: :mod:`accelplug.backends`)."""

from __future__ import annotations

from ..._import_paths import lazy_submodules
from ...plugins.environments import *  # noqa: F403 - the mirror carries its __all__
from ...plugins.environments import __all__ as _shared

__all__ = [*_shared, "XLAEnvironment"]  # noqa: F405 - XLAEnvironment: from __getattr__ below

__getattr__ = lazy_submodules(__name__, (), {"XLAEnvironment": "accelplug.backends"})
