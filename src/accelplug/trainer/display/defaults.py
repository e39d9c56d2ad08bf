"""The display callbacks a Trainer adds by itself, and the order callbacks run in (Lightning's rules).

``enable_model_summary`` (on by default) adds a ``RichModelSummary`` (rich is one of accelplug's dependencies)
unless the list holds a ``ModelSummary`` already; checkpointing callbacks then move to the end, so they see what
the others logged. ``trainer.callbacks`` reads as Lightning's does for the same arguments.
"""

from __future__ import annotations

from typing import Any

from ...callbacks.base import Checkpoint
from ...callbacks.model_summary import ModelSummary, RichModelSummary

__all__ = ["configure_callbacks"]


def configure_callbacks(options: Any, callbacks: list[Any]) -> list[Any]:
    """``callbacks`` with the Trainer's own display callbacks added, checkpointing callbacks last."""
    callbacks = list(callbacks)
    if options.enable_model_summary and not any(isinstance(c, ModelSummary) for c in callbacks):
        callbacks.append(RichModelSummary())
    return [c for c in callbacks if not isinstance(c, Checkpoint)] + [c for c in callbacks if isinstance(c, Checkpoint)]
