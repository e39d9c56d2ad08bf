"""Lightning's string enums: members compare equal to their value strings, in any case.

Below every room, since callbacks, the Trainer and the precisions all name options this way
(``GradClipAlgorithmType.NORM == "Norm"``, ``Interval.step == "step"``, ``TrainerFn.FITTING == "fit"``).
"""

from __future__ import annotations

import warnings
from enum import Enum
from typing import Literal, TypeVar

__all__ = ["LightningEnum"]

_E = TypeVar("_E", bound="LightningEnum")


class LightningEnum(str, Enum):
    """A ``str`` enum whose members equal their values in any case: ``GradClipAlgorithmType.NORM == "Norm"``.

    Written here rather than taken from ``lightning_utilities``' ``StrEnum``: importing that package loads
    ``packaging``'s requirement parser, about 0.1 s, on the path of every ``Trainer()``.
    """

    def __eq__(self, other: object) -> bool:
        other = other.value if isinstance(other, Enum) else other
        return isinstance(other, str) and self.value.lower() == other.lower()

    def __hash__(self) -> int:
        return hash(self.value.lower())

    @classmethod
    def from_str(cls: type[_E], value: str, source: Literal["key", "value", "any"] = "key") -> _E:
        """The member named ``value`` (``source="key"``, any case), or whose value it is (``"value"``), or either."""
        wanted = value.lower()
        for name, member in cls.__members__.items():
            if source in ("key", "any") and name.lower() == wanted:
                return member
        for member in cls.__members__.values():
            if source in ("value", "any") and member == value:
                return member
        accepted = [*(cls.__members__ if source != "value" else ()), *(m.value for m in cls if source != "key")]
        raise ValueError(f"Invalid match: expected one of {accepted}, but got {value}.")

    @classmethod
    def try_from_str(cls: type[_E], value: str, source: Literal["key", "value", "any"] = "key") -> _E | None:
        """:meth:`from_str`, or None with a warning when nothing matches."""
        try:
            return cls.from_str(value, source)
        except ValueError as exc:
            warnings.warn(str(exc), UserWarning, stacklevel=2)
            return None
