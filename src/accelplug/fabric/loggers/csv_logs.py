"""``lightning.fabric.loggers.csv_logs``'s path (imports only): Lightning Fabric's ``CSVLogger``."""

from __future__ import annotations

from ...loggers.csv_logs import ExperimentWriter as _ExperimentWriter  # noqa: F401 - Lightning Fabric's private name
from ...loggers.csv_logs import FabricCSVLogger as CSVLogger

__all__ = ["CSVLogger"]
