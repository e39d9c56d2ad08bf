"""The Trainer's option enums (Lightning's ``GradClipAlgorithmType``); their base lives in :mod:`accelplug.enums`."""

from __future__ import annotations

from ...enums import LightningEnum

__all__ = ["GradClipAlgorithmType", "LightningEnum"]


class GradClipAlgorithmType(LightningEnum):
    """The two ways ``gradient_clip_algorithm`` clips: by ``"value"`` or by ``"norm"``."""

    VALUE = "value"
    NORM = "norm"
