"""Numeric precisions as registered objects (built-ins here; plugins add theirs through a hook)."""

from .base import Precision
from .full import Float32Precision, Float64Precision
from .mixed import BF16MixedPrecision, FP16MixedPrecision

__all__ = ["BF16MixedPrecision", "FP16MixedPrecision", "Float32Precision", "Float64Precision", "Precision"]
