"""Lightning's ``MixedPrecision``: float32 weights, the forward under ``torch.autocast`` (``16-mixed``/``bf16-mixed``).

The autocast context and the gradient scaler are the built-in ``bf16-mixed``/``16-mixed`` precisions'; a
scaler passed here replaces the one ``16-mixed`` would make, so a user's ``GradScaler(init_scale=...)`` is
the one that scales. The step methods below are Lightning's order for a subclass that takes over the step.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...errors import MisconfigurationException, did_you_mean
from ...overrides import default_hook
from ..mixed import BF16MixedPrecision, FP16MixedPrecision
from .base import Precision

if TYPE_CHECKING:
    import torch

    from ..base import NumericPrecision

__all__ = ["MixedPrecision", "ScaledSteps"]

_ACCEPTED = ("16-mixed", "bf16-mixed")
_SCALER_METHODS = ("scale", "unscale_", "step", "update", "state_dict", "load_state_dict")


def autocast_device(device: object, owner: str) -> str:
    """The device type ``torch.autocast`` takes for ``device`` (``"cuda:0"`` is ``"cuda"``), or a clear refusal."""
    import torch

    try:
        device_type = torch.device(device).type if isinstance(device, (str, torch.device)) else None
    except RuntimeError:
        device_type = None
    known = ("cpu", "cuda", "mps", "xpu", "hpu", "xla", torch._C._get_privateuse1_backend_name())
    if device_type is None or not torch.amp.is_autocast_available(device_type):
        raise MisconfigurationException(
            f"{owner}(device={device!r}) is not a device type torch.autocast runs on; expected one of "
            f"{', '.join(repr(k) for k in known)}.{did_you_mean(device, known)}"
        )
    return device_type


class ScaledSteps(Precision):
    """Lightning's step methods of a precision whose ``scaler`` may scale the loss (``MixedPrecision``,
    ``FSDPPrecision``): the loss scaled before backward, the step through the scaler, fused optimizers kept from
    clipping. Used where a subclass takes over the step, or where a user calls them directly."""

    scaler: Any = None

    @default_hook
    def pre_backward(self, tensor: torch.Tensor, module: Any) -> torch.Tensor:
        if self.scaler is not None:
            tensor = self.scaler.scale(tensor)
        return super().pre_backward(tensor, module)

    def _fabric_backward(self, tensor: torch.Tensor, model: Any, *args: Any, **kwargs: Any) -> None:
        """Lightning Fabric's backward: the loss scaled (``16-mixed``) before its own backward."""
        scaled = self.scaler.scale(tensor) if self.scaler is not None else tensor
        super()._fabric_backward(scaled, model, *args, **kwargs)

    @default_hook
    def optimizer_step(
        self, optimizer: Any, model: Any = None, closure: Callable[[], Any] | None = None, **kwargs: Any
    ) -> Any:
        """Lightning's step through the scaler; with the optimizer alone (Lightning Fabric's call), the scaler
        steps it with ``kwargs`` and updates its scale, the gradients already computed."""
        if self.scaler is None:
            return super().optimizer_step(optimizer, model, closure, **kwargs)
        import torch

        if isinstance(optimizer, torch.optim.LBFGS):
            if model is None and closure is None:
                raise TypeError("AMP and the LBFGS optimizer are not compatible.")  # Lightning Fabric's type
            raise MisconfigurationException("AMP and the LBFGS optimizer are not compatible.")
        if model is None and closure is None:
            output = self.scaler.step(optimizer, **kwargs)
            self.scaler.update()
            return output
        result = closure() if closure is not None else None
        # training_step returned None: nothing was scaled, nothing to step (Lightning's rule)
        skipped = result is None and bool(getattr(model, "automatic_optimization", True))
        if not skipped and not _unscales_itself(optimizer):
            self.scaler.unscale_(optimizer)
        self._after_closure(model, optimizer)
        if skipped:
            return result
        output = self.scaler.step(optimizer, **kwargs)
        self.scaler.update()
        return output

    @default_hook
    def clip_gradients(self, optimizer: Any, clip_val: float = 0.0, gradient_clip_algorithm: Any = "norm") -> None:
        if clip_val > 0 and _unscales_itself(optimizer):
            raise RuntimeError(
                f"The current optimizer, {type(optimizer).__qualname__}, does not allow for gradient clipping"
                " because it performs unscaling of gradients internally. HINT: Are you using a 'fused' optimizer?"
            )
        super().clip_gradients(optimizer, clip_val, gradient_clip_algorithm)


class MixedPrecision(ScaledSteps):
    """Automatic mixed precision: ``precision`` is ``"16-mixed"`` (float16, loss scaled) or ``"bf16-mixed"``.

    ``device`` is the device type autocast runs on (``"cpu"``, ``"cuda"``, ``"mps"``); ``scaler`` a
    ``torch.amp.GradScaler`` for ``16-mixed`` (one is made when None; ``bf16-mixed`` refuses one).
    """

    def __init__(self, precision: str, device: str, scaler: torch.amp.GradScaler | None = None) -> None:
        if precision not in _ACCEPTED:
            raise MisconfigurationException(  # Lightning's words, which its users match on
                f"Passed `{type(self).__name__}(precision={precision!r})`. Precision must be '16-mixed' or "
                f"'bf16-mixed'.{did_you_mean(precision, _ACCEPTED)}"
            )
        if scaler is not None and not all(callable(getattr(scaler, m, None)) for m in _SCALER_METHODS):
            raise MisconfigurationException(
                f"{type(self).__name__}(scaler={scaler!r}) is not a gradient scaler; expected a "
                "torch.amp.GradScaler (or None to let '16-mixed' make one)."
            )
        if scaler is not None and precision == "bf16-mixed":
            raise MisconfigurationException(f"`precision='bf16-mixed'` does not use a scaler, found {scaler}.")
        self.precision = precision
        if device is None or isinstance(device, (str, int, float)) or _is_torch_device(device):
            self.device = self.device_type = autocast_device(device, type(self).__name__)
        else:  # another object standing for a device: kept as given, as Lightning keeps it, for torch to read when used
            self.device = self.device_type = device
        if scaler is None and precision == "16-mixed":
            scaler = _grad_scaler_for(self.device)
        self.scaler = scaler

    def _numerics_name(self) -> str:
        return self.precision

    def _make_numerics(self) -> NumericPrecision:
        numerics = super()._make_numerics()
        if self.precision == "16-mixed":  # the plugin's scaler scales, or none where it is turned off (no CUDA)
            given = self.__dict__.get("scaler")
            enabled = getattr(given, "is_enabled", None)
            numerics.scaler = None if given is None or (callable(enabled) and not enabled()) else given
        return numerics

    def autocast_context_manager(self) -> contextlib.AbstractContextManager[Any]:
        """The ``torch.autocast`` context the forward runs in."""
        return self.numerics.forward_context()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(precision={self.precision!r}, device={self.device!r})"


MixedPrecision.register(BF16MixedPrecision)  # what precision="bf16-mixed"/"16-mixed" selects counts as one
MixedPrecision.register(FP16MixedPrecision)


def _is_torch_device(device: object) -> bool:
    import torch

    return isinstance(device, torch.device)


def _grad_scaler_for(device: Any) -> Any:
    """Lightning's default scaler of ``16-mixed``: torch's ``GradScaler`` for the device, made whatever the device
    (turned off, with torch's warning, where its runtime is missing: it then passes the loss and step through)."""
    import torch

    return torch.amp.GradScaler(device=device)


def _unscales_itself(optimizer: Any) -> bool:
    """A fused optimizer unscales inside its own step (torch marks it so)."""
    return bool(getattr(optimizer, "_step_supports_amp_scaling", False))
