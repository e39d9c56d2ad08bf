"""Lightning's ``DeepSpeedPrecision``: which dtype a DeepSpeed run keeps its weights and computes in.

Lightning's class is plain Python: it checks the precision name and converts modules and default dtypes, while
the DeepSpeed engine (here: the ``accelplug-deepspeed`` plugin's strategy) does the mixed-precision arithmetic
itself. So this one works without DeepSpeed installed, as Lightning's does: ``"16-true"``/``"bf16-true"`` cast
the module and set the default dtype while it is built, the mixed and ``"32-true"`` precisions keep float32
weights.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import MisconfigurationException
from .base import Precision

if TYPE_CHECKING:
    import torch

__all__ = ["DeepSpeedPrecision", "FabricDeepSpeedPrecision"]

_SUPPORTED = ("bf16-mixed", "16-mixed", "bf16-true", "16-true", "32-true")


class DeepSpeedPrecision(Precision):
    """The precision of a DeepSpeed run: one of ``"bf16-mixed"``, ``"16-mixed"``, ``"bf16-true"``, ``"16-true"``,
    ``"32-true"``."""

    def __init__(self, precision: str) -> None:
        if precision not in _SUPPORTED:
            raise MisconfigurationException(self._refusal(precision))
        self.precision = precision

    @staticmethod
    def _refusal(precision: object) -> str:
        return (
            f"`Trainer(strategy='deepspeed', precision={precision!r})` is not supported. `precision` must be one of: "
            f"{', '.join(repr(p) for p in _SUPPORTED)}."
        )

    def _numerics_name(self) -> str:
        return self.precision

    def _fabric_backward(self, tensor: torch.Tensor, model: Any, *args: Any, **kwargs: Any) -> None:
        """Lightning Fabric's DeepSpeed backward: the engine's own (it scales and reduces)."""
        model.backward(tensor, *args, **kwargs)

    @property
    def _desired_dtype(self) -> torch.dtype:
        """Lightning's private name of the dtype a DeepSpeed run computes in (``float32`` for ``"32-true"``)."""
        return self._desired_input_dtype

    def __repr__(self) -> str:
        return f"{type(self).__name__}(precision={self.precision!r})"


class FabricDeepSpeedPrecision(DeepSpeedPrecision):
    """Lightning Fabric's ``DeepSpeedPrecision`` (``lightning.fabric.plugins``): the same, refusing in its words."""

    @staticmethod
    def _refusal(precision: object) -> str:
        return (
            f"`precision={precision!r})` is not supported in DeepSpeed. `precision` must be one of: "
            f"{', '.join(repr(p) for p in _SUPPORTED)}."
        )
