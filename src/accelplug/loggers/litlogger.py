"""``LitLogger``: Lightning 2.6's logger for Lightning AI's experiments platform, which needs ``litlogger``.

The name exists with Lightning's signature so a script and a ``LightningCLI`` config that name it are
understood; building one checks for the ``litlogger`` package first and names it when it is missing.
accelplug does not drive ``litlogger`` itself yet (the package talks to lightning.ai's service, which
could not be reached or verified here), so with the package installed the logger still refuses, saying so,
rather than logging nowhere.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from typing import Any

from ..errors import MisconfigurationException
from .logger import Logger

__all__ = ["LitLogger"]


class LitLogger(Logger):
    """Lightning's ``LitLogger`` arguments; refused with the reason (see the module docstring)."""

    def __init__(
        self,
        root_dir: str | os.PathLike[str] | None = None,
        name: str | None = None,
        teamspace: str | None = None,
        metadata: dict[str, str] | None = None,
        store_step: bool = True,
        log_model: bool = False,
        save_logs: bool = True,
        checkpoint_name: str | None = None,
    ) -> None:
        if importlib.util.find_spec("litlogger") is None:
            raise MisconfigurationException(
                "LitLogger needs the 'litlogger' package, which is not installed: pip install litlogger "
                "(it logs to Lightning AI's experiments platform). For local files use CSVLogger or TensorBoardLogger."
            )
        raise MisconfigurationException(
            "LitLogger: accelplug does not drive the 'litlogger' package yet; use lightning's own "
            "lightning.pytorch.loggers.LitLogger (accelplug's Trainer accepts any logger object), or WandbLogger, "
            "MLFlowLogger, CometLogger."
        )

    @property
    def name(self) -> str:
        return ""

    @property
    def version(self) -> int | str:
        return ""

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        """Never reached: the constructor refuses."""

    def log_hyperparams(self, params: Any, *args: Any, **kwargs: Any) -> None:
        """Never reached: the constructor refuses."""
