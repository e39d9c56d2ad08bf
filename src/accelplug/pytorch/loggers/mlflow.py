"""``lightning.pytorch.loggers.mlflow``'s path: ``accelplug.loggers.mlflow``, the same objects."""

from __future__ import annotations

from ...loggers.mlflow import *  # noqa: F403 - the mirror follows whatever the module exports
from ...loggers.mlflow import _MLFLOW_AVAILABLE as _MLFLOW_AVAILABLE  # Lightning's flag, patched here by tests
from ...loggers.mlflow import (
    _MLFLOW_SYNCHRONOUS_AVAILABLE as _MLFLOW_SYNCHRONOUS_AVAILABLE,
)  # Lightning's flag, patched here by tests
from ...loggers.mlflow import __all__ as __all__
from ...loggers.mlflow import _get_resolve_tags as _get_resolve_tags  # Lightning's name, replaced here by tests
