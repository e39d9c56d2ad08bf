"""``accelplug.tuner`` (Lightning's ``lightning.pytorch.tuner``): ``Tuner(trainer).lr_find`` and ``.scale_batch_size``.

The searches are here (:mod:`.lr_finder`, :mod:`.batch_size_scaling`), free of the Trainer; the trial fits
they drive are the Trainer's (:mod:`accelplug.trainer._tuning`), reached through the ``LearningRateFinder``
and ``BatchSizeFinder`` callbacks that :class:`Tuner` adds for one call.
"""

from __future__ import annotations

from .tuning import Tuner

__all__ = ["Tuner"]
