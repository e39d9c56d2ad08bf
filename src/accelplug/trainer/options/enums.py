"""The Trainer's option enums (Lightning's ``GradClipAlgorithmType``); their base lives in :mod:`accelplug.enums`."""

from __future__ import annotations

from ...enums import LightningEnum

__all__ = ["GradClipAlgorithmType", "LightningEnum"]


class GradClipAlgorithmType(LightningEnum):
    """The two ways ``gradient_clip_algorithm`` clips: by ``"value"`` or by ``"norm"``."""

    VALUE = "value"
    NORM = "norm"

    @staticmethod
    def supported_type(val: str) -> bool:
        """Whether ``val`` names one of the algorithms, exactly as written (``"norm"``, not ``"Norm"``)."""
        return val in [member.value for member in GradClipAlgorithmType]

    @staticmethod
    def supported_types() -> list[str]:
        """The algorithms' names, in the order Lightning lists them."""
        return [member.value for member in GradClipAlgorithmType]
