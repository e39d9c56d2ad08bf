"""Lightning's string enums: members compare equal to their value strings, case-insensitively."""

from __future__ import annotations

from lightning_utilities.core.enums import StrEnum

__all__ = ["GradClipAlgorithmType", "LightningEnum"]


class LightningEnum(StrEnum):
    """A ``str`` enum (from ``lightning_utilities``) whose members equal their values in any case:
    ``GradClipAlgorithmType.NORM == "Norm"``."""

    def __eq__(self, other: object) -> bool:
        other = other.value if isinstance(other, LightningEnum) else other
        return isinstance(other, str) and self.value.lower() == other.lower()

    def __hash__(self) -> int:
        return hash(self.value.lower())


class GradClipAlgorithmType(LightningEnum):
    """The two ways ``gradient_clip_algorithm`` clips: by ``"value"`` or by ``"norm"``."""

    VALUE = "value"
    NORM = "norm"
