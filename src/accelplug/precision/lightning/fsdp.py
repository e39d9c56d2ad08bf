"""Lightning's ``FSDPPrecision``: the precision of a sharded (FSDP) run, as the FSDP strategy consumes it.

The strategy asks the numerics for torch's ``MixedPrecisionPolicy`` (``fsdp_mixed_precision``); ``16-mixed``
scales the loss with torch's ``ShardedGradScaler``, which unscales each rank's shard.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import MisconfigurationException, did_you_mean
from .mixed import _SCALER_METHODS, ScaledSteps

if TYPE_CHECKING:
    from ..base import NumericPrecision

__all__ = ["FSDPPrecision"]

_ACCEPTED = ("32-true", "16-mixed", "bf16-mixed", "16-true", "bf16-true")


class FSDPPrecision(ScaledSteps):
    """``precision`` one of ``"32-true"``, ``"16-mixed"``, ``"bf16-mixed"``, ``"16-true"``, ``"bf16-true"``;
    ``scaler`` a ``ShardedGradScaler`` for ``16-mixed`` (one is made when None)."""

    device_type = "cuda"

    def __init__(self, precision: str, scaler: Any = None) -> None:
        if precision not in _ACCEPTED:
            raise MisconfigurationException(
                f"`{type(self).__name__}(precision={precision!r})` is not supported in FSDP. `precision` must be one "
                f"of: {', '.join(repr(a) for a in _ACCEPTED)}.{did_you_mean(precision, _ACCEPTED)}"
            )
        if scaler is not None and precision != "16-mixed":
            raise MisconfigurationException(f"`precision={precision!r}` does not use a scaler, found {scaler}.")
        if scaler is not None and not all(callable(getattr(scaler, m, None)) for m in _SCALER_METHODS):
            raise MisconfigurationException(
                f"{type(self).__name__}(scaler={scaler!r}) is not a gradient scaler; expected a "
                "torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler (or None)."
            )
        self.precision = precision
        if scaler is None and precision == "16-mixed":
            import warnings

            from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "enabled, but CUDA is not available": the scaler then passes through
                scaler = ShardedGradScaler()
        self.scaler = scaler

    def _numerics_name(self) -> str:
        return self.precision

    def _make_numerics(self) -> NumericPrecision:
        numerics = super()._make_numerics()
        if self.precision == "16-mixed":
            numerics.scaler = self.__dict__.get("scaler")
        return numerics

    @property
    def mixed_precision_config(self) -> Any:
        """Lightning's report of the precision as torch's FSDP1 ``MixedPrecision``: parameters, gradient reduction
        and buffers all in the precision's dtype (float32 for ``32-true``). The ``*-true`` precisions warn that
        sharding still keeps a full-precision copy. The strategy shards with the FSDP2 policy the numerics derive
        (``fsdp_mixed_precision``), which holds the same dtypes."""
        import torch
        from torch.distributed.fsdp import MixedPrecision

        if self.precision in ("16-true", "bf16-true"):
            from ...distributed.rank_zero import rank_zero_warn

            rank_zero_warn(
                f"FSDP with `{self.precision}` enables computation in lower precision. FSDP keeps a full-precision "
                "copy of the model parameters for sharding all the same."
            )
        dtype = {"16": torch.float16, "bf16": torch.bfloat16, "32": torch.float32}[self.precision.split("-")[0]]
        return MixedPrecision(param_dtype=dtype, reduce_dtype=dtype, buffer_dtype=dtype)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(precision={self.precision!r})"
