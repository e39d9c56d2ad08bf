"""``lightning.pytorch.callbacks``'s path: every name of ``accelplug.callbacks``, the same objects."""

from __future__ import annotations

from ..._import_paths import lazy_submodules
from ...callbacks import *  # noqa: F403 - the mirror follows whatever accelplug.callbacks exports
from ...callbacks import __all__ as __all__

__getattr__ = lazy_submodules(__name__, ())  # its other submodules, when first read (as after `import lightning`)
