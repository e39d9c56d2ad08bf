"""Lightning's ``BitsandbytesPrecision`` and ``TransformerEnginePrecision``: names whose packages accelplug lacks.

Both need a CUDA-only package (bitsandbytes, NVIDIA's transformer_engine) and swap the model's Linear
layers for the package's own. They exist with Lightning's signatures so a script imports and its arguments
are checked; making one names the package to install, and, where the package is present, says that accelplug
does not drive it yet rather than training silently in another precision.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...errors import MisconfigurationException, did_you_mean
from .base import Precision

if TYPE_CHECKING:
    import torch

__all__ = ["BitsandbytesPrecision", "TransformerEnginePrecision"]

_BNB_MODES = ("nf4", "nf4-dq", "fp4", "fp4-dq", "int8", "int8-training")


def _require(package: str, owner: str, install: str) -> None:
    if importlib.util.find_spec(package) is None:
        raise MisconfigurationException(
            f"{owner} needs the {package!r} package, which is not installed: {install} (it runs on CUDA GPUs only)."
        )
    raise MisconfigurationException(
        f"{owner}: {package!r} is installed, but accelplug does not drive it yet; train with precision='bf16-mixed' "
        "or precision='bf16-true', or use Lightning for this plugin."
    )


def _check_dtype(owner: str, argument: str, value: object, *, optional: bool) -> None:
    import torch

    if (value is None and optional) or (isinstance(value, torch.dtype) and value.is_floating_point):
        return
    raise MisconfigurationException(
        f"{owner}({argument}={value!r}) is invalid: expected a floating torch.dtype such as torch.bfloat16"
        f"{' or None' if optional else ''}."
    )


class BitsandbytesPrecision(Precision):
    """Quantized Linear layers through bitsandbytes (``mode``: ``"nf4"``, ``"nf4-dq"``, ``"fp4"``, ``"fp4-dq"``,
    ``"int8"``, ``"int8-training"``)."""

    def __init__(self, mode: str, dtype: torch.dtype | None = None, ignore_modules: set[str] | None = None) -> None:
        owner = type(self).__name__
        if mode not in _BNB_MODES:
            raise MisconfigurationException(
                f"{owner}(mode={mode!r}) is invalid. Accepted: {', '.join(repr(m) for m in _BNB_MODES)}."
                f"{did_you_mean(mode, _BNB_MODES)}"
            )
        _check_dtype(owner, "dtype", dtype, optional=True)
        if ignore_modules is not None and not (
            isinstance(ignore_modules, (set, frozenset, list, tuple))
            and all(isinstance(m, str) for m in ignore_modules)
        ):
            raise MisconfigurationException(
                f"{owner}(ignore_modules={ignore_modules!r}) is invalid: expected a set of module name prefixes "
                "such as {'lm_head'}, or None."
            )
        _require("bitsandbytes", owner, "pip install bitsandbytes")


class TransformerEnginePrecision(Precision):
    """FP8 Linear layers through NVIDIA's Transformer Engine (``weights_dtype`` the dtype of everything else)."""

    def __init__(
        self,
        *,
        weights_dtype: torch.dtype,
        recipe: Mapping[str, Any] | Any | None = None,
        replace_layers: bool | None = None,
        fallback_compute_dtype: torch.dtype | None = None,
    ) -> None:
        owner = type(self).__name__
        _check_dtype(owner, "weights_dtype", weights_dtype, optional=False)
        _check_dtype(owner, "fallback_compute_dtype", fallback_compute_dtype, optional=True)
        if replace_layers is not None and not isinstance(replace_layers, bool):
            raise MisconfigurationException(
                f"{owner}(replace_layers={replace_layers!r}) is invalid: expected True, False or None."
            )
        _require("transformer_engine", owner, 'pip install "transformer_engine[pytorch]"')
