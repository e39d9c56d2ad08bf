"""The precision plugin names Lightning 2.0 renamed (``MixedPrecisionPlugin`` -> ``MixedPrecision``...), still accepted.

Lightning 2.6 keeps each old name as a subclass of the new class that warns, when built, with a
``LightningDeprecationWarning`` naming the new class; so do these. ``FSDPMixedPrecisionPlugin`` also takes the
``device`` argument it once had (and ignores it). The XLA ones live with the XLA stand-ins (:mod:`accelplug.backends`).
"""

from __future__ import annotations

from typing import Any

import torch
from lightning_utilities.core.apply_func import apply_to_collection

from ...distributed.rank_zero import rank_zero_deprecation
from .base import Precision
from .deepspeed import DeepSpeedPrecision
from .fsdp import FSDPPrecision
from .half import DoublePrecision, HalfPrecision
from .mixed import MixedPrecision
from .quantized import BitsandbytesPrecision, TransformerEnginePrecision

__all__ = [
    "BitsandbytesPrecisionPlugin",
    "DeepSpeedPrecisionPlugin",
    "DoublePrecisionPlugin",
    "FSDPMixedPrecisionPlugin",
    "FSDPPrecisionPlugin",
    "HalfPrecisionPlugin",
    "LightningDoublePrecisionModule",
    "MixedPrecisionPlugin",
    "PrecisionPlugin",
    "TransformerEnginePrecisionPlugin",
    "renamed",
]


def renamed(old_name: str, new_class: type, module: str = __name__) -> Any:
    """``new_class`` under its Lightning 1.x name, defined in ``module``: building one warns that the name is
    deprecated."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        rank_zero_deprecation(
            f"The `{old_name}` is deprecated. Use `lightning.pytorch.plugins.precision.{new_class.__name__}` instead."
        )
        base: Any = new_class  # the class itself, not an instance: its __init__ takes this object
        base.__init__(self, *args, **kwargs)

    doc = f"Lightning's old name of :class:`{new_class.__name__}` (deprecated)."
    return type(old_name, (new_class,), {"__init__": __init__, "__doc__": doc, "__module__": module})


BitsandbytesPrecisionPlugin: type[BitsandbytesPrecision] = renamed("BitsandbytesPrecisionPlugin", BitsandbytesPrecision)
DeepSpeedPrecisionPlugin: type[DeepSpeedPrecision] = renamed("DeepSpeedPrecisionPlugin", DeepSpeedPrecision)
DoublePrecisionPlugin: type[DoublePrecision] = renamed("DoublePrecisionPlugin", DoublePrecision)
FSDPPrecisionPlugin: type[FSDPPrecision] = renamed("FSDPPrecisionPlugin", FSDPPrecision)
HalfPrecisionPlugin: type[HalfPrecision] = renamed("HalfPrecisionPlugin", HalfPrecision)
MixedPrecisionPlugin: type[MixedPrecision] = renamed("MixedPrecisionPlugin", MixedPrecision)
PrecisionPlugin: type[Precision] = renamed("PrecisionPlugin", Precision)
TransformerEnginePrecisionPlugin: type[TransformerEnginePrecision] = renamed(
    "TransformerEnginePrecisionPlugin", TransformerEnginePrecision
)


class FSDPMixedPrecisionPlugin(FSDPPrecision):
    """Lightning's old name of mixed precision under FSDP (deprecated): ``FSDPPrecision`` with the ``device``
    argument it once took."""

    def __init__(self, precision: str, device: str, scaler: Any = None) -> None:
        rank_zero_deprecation(
            f"The `{type(self).__name__}` is deprecated. Use `lightning.pytorch.plugins.precision.FSDPPrecision` "
            "instead."
        )
        super().__init__(precision=precision, scaler=scaler)


def _to_double(collection: Any) -> Any:
    """Every floating-point tensor in ``collection`` as float64; other tensors and values as they are."""
    return apply_to_collection(
        collection, torch.Tensor, lambda t: t.to(torch.double) if torch.is_floating_point(t) else t
    )


class LightningDoublePrecisionModule(torch.nn.Module):
    """A wrapper around a LightningModule that gives its ``forward`` and steps their floating inputs in float64
    (deprecated in Lightning: ``DoublePrecision`` converts the inputs itself)."""

    def __init__(self, pl_module: torch.nn.Module) -> None:
        super().__init__()
        rank_zero_deprecation(
            f"The `{type(self).__name__}` is deprecated and no longer needed. Convert the inputs to the `*_step` "
            "methods directly using `trainer.precision_plugin.convert_input(...)`."
        )
        self.module = pl_module
        ignored = getattr(pl_module, "_ddp_params_and_buffers_to_ignore", [])
        self._ddp_params_and_buffers_to_ignore = [f"module.{name}" for name in ignored]

    def _call(self, name: str, args: Any, kwargs: Any) -> Any:
        return getattr(self.module, name)(*_to_double(args), **_to_double(kwargs))

    def training_step(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("training_step", args, kwargs)

    def validation_step(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("validation_step", args, kwargs)

    def test_step(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("test_step", args, kwargs)

    def predict_step(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("predict_step", args, kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*_to_double(args), **_to_double(kwargs))
