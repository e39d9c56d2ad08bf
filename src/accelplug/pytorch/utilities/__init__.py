"""``lightning.pytorch.utilities``'s path: every name of ``accelplug.utilities``, the same objects."""

from __future__ import annotations

from ..._import_paths import lazy_submodules
from ...utilities import *  # noqa: F403 - the mirror follows whatever accelplug.utilities exports
from ...utilities import __all__ as __all__

__getattr__ = lazy_submodules(__name__, ())  # its other submodules, when first read (as after `import lightning`)
