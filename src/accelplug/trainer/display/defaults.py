"""The callbacks a Trainer adds by itself, and the order callbacks run in (Lightning's rules).

``max_time`` adds a ``Timer`` with that duration, checked after every step, unless the list holds a ``Timer``
already: then that one governs and ``max_time`` is ignored, with Lightning's INFO line (the Trainer drops the
option, see :func:`given_timer`). The loop keeps its own check of ``max_time`` (so ``trainer.stop_reason`` says
``MAX_TIME``); the added ``Timer`` is what ``trainer.callbacks`` shows, and what a checkpoint keeps of the time
already spent, so a resumed fit stops when the whole budget is used, as in Lightning.

``enable_model_summary`` (on by default) adds a ``RichModelSummary`` (rich is one of accelplug's dependencies)
unless the list holds a ``ModelSummary`` already; checkpointing callbacks then move to the end, so they see what
the others logged. A ``ProgressBar`` callback in the list draws instead of accelplug's own display; two of them,
or one with ``enable_progress_bar=False``, are refused as Lightning refuses them. Unlike Lightning, no progress-bar
callback is added by default: accelplug's own display (rich bars on a terminal, plain lines in logs) draws then.
"""

from __future__ import annotations

import datetime
import logging
from typing import Any

from ...callbacks.base import Callback, Checkpoint
from ...callbacks.model_summary import ModelSummary, RichModelSummary
from ...callbacks.progress_bar import ProgressBar
from ...distributed.rank_zero import is_rank_zero, rank_zero_info
from ...errors import MisconfigurationException

__all__ = [
    "DisplayProgressBar",
    "add_module_callbacks",
    "configure_callbacks",
    "given_timer",
    "progress_bar_callback",
]


def configure_callbacks(options: Any, callbacks: list[Any]) -> list[Any]:
    """``callbacks`` with the Trainer's own display callbacks added, checkpointing callbacks last."""
    callbacks = list(callbacks)
    bars = [c for c in callbacks if isinstance(c, ProgressBar)]
    if len(bars) > 1:
        raise MisconfigurationException(
            f"You added multiple progress bar callbacks to the Trainer: callbacks holds {len(bars)} "
            f"({', '.join(type(b).__name__ for b in bars)}); keep one."
        )
    if bars and options.enable_progress_bar is False:
        raise MisconfigurationException(
            "Trainer was configured with `enable_progress_bar=False` but found "
            f"`{type(bars[0]).__name__}` in callbacks list: remove one of the two."
        )
    if options.max_time is not None:
        from ...callbacks.timer import Timer  # only a timed Trainer loads it

        callbacks.append(Timer(duration=datetime.timedelta(seconds=options.max_time), interval="step"))
    if options.enable_model_summary and not any(isinstance(c, ModelSummary) for c in callbacks):
        callbacks.append(RichModelSummary())
    return [c for c in callbacks if not isinstance(c, Checkpoint)] + [c for c in callbacks if isinstance(c, Checkpoint)]


def given_timer(max_time: float | None, callbacks: list[Any]) -> bool:
    """Whether ``callbacks`` hold a ``Timer`` of the user's while ``max_time`` is set: it then governs the fit's time
    and ``max_time`` is ignored, as Lightning ignores it (with its INFO line)."""
    if max_time is None:
        return False
    from ...callbacks.timer import Timer  # only a timed Trainer loads it

    if not any(isinstance(c, Timer) for c in callbacks):
        return False
    if is_rank_zero():  # Lightning's INFO line, on the Trainer's logger (as the GPU/TPU lines)
        logging.getLogger("accelplug.trainer").info(
            "Ignoring `Trainer(max_time=...)`, callbacks list already contains a Timer."
        )
    return True


def add_module_callbacks(callbacks: list[Any], extra: list[Any]) -> list[Any]:
    """``callbacks`` with those of the module's ``configure_callbacks()`` added, Lightning's rules: a module's
    callback replaces the Trainer's callbacks of its class or of a class it derives from (a module's
    ``ModelCheckpoint`` replaces the default one), checkpointing callbacks stay last. The result becomes
    ``trainer.callbacks``, so ``trainer.checkpoint_callback`` after a fit is the callback that ran; a second call
    gets the same list (the module's callbacks replace themselves)."""
    present = {type(c) for c in callbacks} - {Callback}  # a plain Callback() added as-is is never replaced
    replaced = {kind for kind in present if any(issubclass(type(c), kind) for c in extra)}
    if replaced:
        rank_zero_info(
            "The following callbacks returned in `LightningModule.configure_callbacks` will override existing "
            f"callbacks passed to Trainer: {', '.join(sorted(kind.__name__ for kind in replaced))}"
        )
    merged = [c for c in callbacks if type(c) not in replaced] + list(extra)
    return [c for c in merged if not isinstance(c, Checkpoint)] + [c for c in merged if isinstance(c, Checkpoint)]


def progress_bar_callback(callbacks: list[Any]) -> ProgressBar | None:
    """The progress-bar callback that draws for this Trainer, if the callbacks hold one."""
    return next((c for c in callbacks if isinstance(c, ProgressBar)), None)


class DisplayProgressBar(ProgressBar):
    """accelplug's own display seen as Lightning's ``trainer.progress_bar_callback``.

    Lightning's Trainer adds a progress-bar callback by default, and code reads its totals and metrics
    (``trainer.progress_bar_callback.total_val_batches``, ``get_metrics(...)``). accelplug draws with its own
    display instead (see the module docstring), so ``trainer.progress_bar_callback`` answers with this object:
    the same read-only figures, computed from the Trainer, and no drawing of its own. It is never among
    ``trainer.callbacks`` and no hook of it runs.
    """

    def __init__(self, trainer: Any) -> None:
        super().__init__()
        self._trainer = trainer

    def disable(self) -> None:
        """Nothing to stop: the display itself draws only on global zero."""

    def enable(self) -> None:
        """Nothing to start: the display draws by itself."""
