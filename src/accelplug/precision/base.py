"""The ``NumericPrecision`` base class: what one numeric precision means for a training step.

A precision is a small object the loop consults at fixed points: once to convert the module, per
batch to convert floating inputs and to open the forward context, and per optimizer step to run
backward and step (with or without a gradient scaler). Built-in precisions are registered through the
``register_precisions`` hook like a plugin's, so a new one (fp8, say) is one class in one file plus
one line in a plugin's hook; nothing else in accelplug has to learn its name.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    import torch

    from ..accelerator import Accelerator

__all__ = ["NumericPrecision"]


class NumericPrecision:
    """One precision setting on one device type; the defaults are plain float32 training.

    Subclasses set ``name`` (the canonical name users pass, e.g. ``"bf16-mixed"``) and ``aliases``
    (other spellings such as ``"bf16"``), and override only the steps they change.
    """

    name: ClassVar[str]
    #: The ``torch.amp.GradScaler`` this precision steps through, or None (most precisions need none).
    scaler: Any = None
    #: Other accepted spellings (compared case-insensitively; ints are given as strings, e.g. "16").
    aliases: ClassVar[tuple[str, ...]] = ()
    description: ClassVar[str] = ""
    #: Whether an autocast forward context keeps torch's cache of low-precision weight copies while it lasts.
    #: Fabric keeps torch's default (its context lasts one ``model(...)`` call, whose end empties the cache, as in
    #: Lightning Fabric); the Trainer turns it off (:func:`~accelplug.trainer._setup.start_run`), as Lightning's
    #: Trainer does, because a ``training_step`` may step an optimizer and then run a forward that must see the
    #: new weights.
    cache_casts: bool = True

    def __init__(self, device_type: str) -> None:
        self.device_type = device_type

    @property
    def precision(self) -> str:
        """Lightning's name of this precision (``trainer.precision_plugin.precision``): the canonical name."""
        return self.name

    # ---- what the selection asks, before anything runs ---------------------------------------
    @classmethod
    def supports(cls, accelerator: type[Accelerator]) -> bool | None:
        """Whether ``accelerator`` can train in this precision; None defers to its ``supported_precisions()``.

        A plugin precision for hardware it knows (fp8 on CUDA, say) answers here, so built-in
        accelerators need not list names they have never heard of.
        """
        return None

    # ---- once per run --------------------------------------------------------------------------
    @property
    def param_dtype(self) -> torch.dtype | None:
        """The dtype parameters and floating inputs are cast to, or None to leave them alone."""
        return None

    @property
    def compute_dtype(self) -> torch.dtype:
        """The dtype the forward pass computes in (what the conformance kit checks)."""
        import torch

        return self.param_dtype or torch.float32

    def convert_module(self, module: torch.nn.Module) -> torch.nn.Module:
        """Cast ``module`` to ``param_dtype`` (done before it is moved to the device)."""
        if self.param_dtype is not None:
            module.to(dtype=self.param_dtype)
        return module

    def fsdp_mixed_precision(self) -> Any:
        """A ``torch.distributed.fsdp.MixedPrecisionPolicy`` for sharded training, or None for none."""
        return None

    def tensor_init_context(self) -> contextlib.AbstractContextManager[Any]:
        """The context tensors are created in (Fabric's ``init_tensor``/``init_module``): the default dtype
        is ``param_dtype`` inside it, so a module built there needs no conversion afterwards."""
        dtype = self.param_dtype
        return _default_dtype(dtype) if dtype is not None else contextlib.nullcontext()

    # ---- per batch -----------------------------------------------------------------------------
    @property
    def uses_autocast(self) -> bool:
        """True when ``forward_context`` does something (the loop skips entering a no-op context)."""
        return self.param_dtype is not None

    def forward_context(self) -> contextlib.AbstractContextManager[Any]:
        """The context the forward pass (``training_step`` etc.) runs in: for a true precision, torch's default
        dtype is ``param_dtype`` inside, so tensors the step creates match the weights (as in Lightning)."""
        dtype = self.param_dtype
        return _default_dtype(dtype) if dtype is not None else contextlib.nullcontext()

    def convert_input(self, data: Any) -> Any:
        """Floating tensors in ``data`` (nested in tuples, lists, dicts) in the dtype the forward computes in,
        what Fabric's module does to its arguments, as Lightning Fabric's precisions do: ``param_dtype`` for a
        true precision, the autocast dtype for a mixed one, nothing at float32."""
        dtype = (
            self.param_dtype if self.param_dtype is not None else (self.compute_dtype if self.uses_autocast else None)
        )
        if dtype is None:
            return data
        from ..data.batches import cast_floating

        return cast_floating(data, dtype)

    def convert_output(self, data: Any) -> Any:
        """The forward's floating outputs back in torch's default dtype, when :meth:`convert_input` changed inputs."""
        if self.param_dtype is None and not self.uses_autocast:
            return data
        import torch

        from ..data.batches import cast_floating

        return cast_floating(data, torch.get_default_dtype())

    # ---- per optimizer step ----------------------------------------------------------------------
    @property
    def needs_help_with_steps(self) -> bool:
        """True when backward/step need this object (a scaler); False lets the loop call torch directly."""
        return False

    def backward(self, loss: torch.Tensor, *args: Any, **kwargs: Any) -> None:
        """``loss.backward``; Fabric passes on its extra arguments (``retain_graph=True``...), the Trainer none."""
        loss.backward(*args, **kwargs)  # type: ignore[no-untyped-call]

    def unscale(self, optimizer: torch.optim.Optimizer) -> None:
        """Bring scaled gradients back to their true values (needed before clipping them)."""

    def step(self, optimizer: torch.optim.Optimizer, closure: Any = None) -> Any:
        """Step one optimizer (a scaler may skip the step when its gradients overflowed)."""
        return optimizer.step(closure=closure) if closure is not None else optimizer.step()

    def update(self) -> None:
        """Once per iteration, after every optimizer stepped (a scaler adjusts its scale here)."""

    # ---- checkpoints ---------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any] | None:
        """State to checkpoint (a scaler's scale), or None when there is none."""
        return None

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, device_type={self.device_type!r})"


@contextlib.contextmanager
def _default_dtype(dtype: torch.dtype) -> Iterator[None]:
    import torch

    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


def __getattr__(name: str) -> Any:
    """``Precision``, this class's name before Lightning's ``Precision`` (``accelplug.plugins.precision``) took it."""
    if name == "Precision":
        warnings.warn(
            f"{__name__}.Precision is now NumericPrecision (Precision is Lightning's plugins= class, "
            "accelplug.plugins.precision.Precision); import NumericPrecision.",
            DeprecationWarning,
            stacklevel=2,
        )
        return NumericPrecision
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
