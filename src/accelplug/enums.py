"""Lightning's string enums: members compare equal to their value strings, in any case.

Below every room, since callbacks, the Trainer and the precisions all name options this way
(``GradClipAlgorithmType.NORM == "Norm"``, ``Interval.step == "step"``, ``TrainerFn.FITTING == "fit"``).
"""

from __future__ import annotations

from lightning_utilities.core.enums import StrEnum

__all__ = ["LightningEnum"]


class LightningEnum(StrEnum):
    """A ``str`` enum (from ``lightning_utilities``) whose members equal their values in any case:
    ``GradClipAlgorithmType.NORM == "Norm"``."""

    def __eq__(self, other: object) -> bool:
        other = other.value if isinstance(other, LightningEnum) else other
        return isinstance(other, str) and self.value.lower() == other.lower()

    def __hash__(self) -> int:
        return hash(self.value.lower())
