"""``lightning.pytorch.callbacks.prediction_writer``'s path: the objects of
:mod:`accelplug.callbacks.prediction_writer`."""

from __future__ import annotations

from ...callbacks.prediction_writer import *  # noqa: F403 - the same names
from ...callbacks.prediction_writer import __all__ as __all__
