"""Moved to :mod:`accelplug.cli.reports` (``bench/models.py`` holds the benchmark's workloads; the two names
were easy to confuse). This path keeps working for one release, with a ``DeprecationWarning``."""

import warnings

from .reports import *  # noqa: F403
from .reports import __all__ as __all__

warnings.warn(
    "accelplug.cli.models moved to accelplug.cli.reports (same names); import from there.",
    DeprecationWarning,
    stacklevel=2,
)
