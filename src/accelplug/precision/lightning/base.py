"""Lightning's ``Precision`` plugin: the object ``Trainer(plugins=[...])`` takes, over accelplug's own precisions.

accelplug's loop consults a small precision object (:class:`accelplug.precision.base.NumericPrecision`: dtype,
forward context, backward, step, scaler). Lightning users write and pass *plugin* objects with another
vocabulary (``pre_backward``, ``backward(tensor, model, optimizer)``, ``optimizer_step(optimizer, model,
closure)``, ``clip_gradients``...). The plugin classes here are that vocabulary on top of the built-in
precisions: each one holds the built-in precision it stands for (its *numerics*) and answers the loop's
questions from it, so ``plugins=[MixedPrecision("bf16-mixed", "cpu")]`` trains through exactly the code
``precision="bf16-mixed"`` does.

Only when a subclass rewrites one of Lightning's step methods (a counting ``optimizer_step``, a ``backward``
that adds a term) does the loop hand the step over to the plugin: it attaches a :class:`PrecisionLoop` for the
length of the fit, and the plugin's defaults reach the hooks, the module's ``backward`` and the strategy's
clipping through it, in Lightning's order. A plugin that rewrites nothing keeps the loop's lean path.
"""

from __future__ import annotations

import contextlib
from abc import ABCMeta
from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from ...overrides import default_hook, overrides
from .. import BUILTIN_PRECISIONS
from ..base import NumericPrecision
from ..full import Float32Precision

if TYPE_CHECKING:
    import torch

__all__ = [
    "CONTEXT_METHODS",
    "STEP_METHODS",
    "Precision",
    "PrecisionLoop",
    "clipping_params",
    "fabric_backward",
    "fabric_optimizer_step",
    "init_context_of",
    "is_plugin",
    "unscale_for_clipping",
]

#: Lightning's step methods: a subclass that rewrites any of them is handed the optimisation step.
STEP_METHODS = (
    "pre_backward",
    "backward",
    "post_backward",
    "optimizer_step",
    "clip_gradients",
    "clip_grad_by_value",
    "clip_grad_by_norm",
    "main_params",
    "_after_closure",
    "_wrap_closure",
)
#: The contexts the step methods run in: rewriting one makes the loop enter it around every forward.
CONTEXT_METHODS = ("forward_context", "train_step_context", "val_step_context", "test_step_context")
#: Rewriting one of these makes clipping Lightning's own (over ``main_params``) rather than the strategy's.
_CLIPPING_OWN = ("clip_grad_by_value", "clip_grad_by_norm", "main_params")
_BY_NAME = {cls.name: cls for cls in BUILTIN_PRECISIONS}


class PrecisionLoop(Protocol):
    """What the Trainer's optimisation lends a plugin that took over the step (Lightning's ``model.trainer``).

    Declared here so the plugin reaches the loop without importing it (the loop sits above the plugins).
    """

    @property
    def module(self) -> Any:
        """The LightningModule being fitted (``model`` in Lightning's step methods)."""

    def call_hook(self, name: str, *args: Any) -> None:
        """Run the callbacks' then the module's ``name`` hook (``on_before_backward``...)."""

    def module_backward(self, loss: torch.Tensor, *args: Any, **kwargs: Any) -> None:
        """The module's ``backward`` hook: its own when it wrote one, else ``loss.backward()``."""

    def after_closure(self, optimizer: Any) -> None:
        """``on_before_optimizer_step`` and, in automatic optimisation, gradient clipping."""

    def clip(self, optimizer: Any, value: float, algorithm: str) -> None:
        """Clip ``optimizer``'s gradients the strategy's way (a sharded module clips across its shards)."""


class Precision(NumericPrecision, metaclass=ABCMeta):
    """Lightning's ``Precision`` plugin: full float32 training (``precision="32-true"``), and the base to subclass.

    Lightning's base class takes no arguments, and subclasses often skip ``super().__init__()``; so every
    attribute here has a class-level default and the numerics are built on first use.

    The built-in precision a name selects (``Trainer(precision="16-mixed")``) counts as an instance of the plugin
    class Lightning would have made for that name (``isinstance(trainer.precision_plugin, MixedPrecision)``, as in
    Lightning): each class registers its built-ins as virtual subclasses. Code that must tell a plugin object
    from a built-in asks :func:`is_plugin`.
    """

    #: Lightning's name of this precision (``trainer.precision``).
    precision: str = "32-true"
    #: The device type the numerics run on; :class:`MixedPrecision` takes it as an argument.
    device_type: str = "cpu"
    _loop: PrecisionLoop | None = None

    def __init__(self) -> None:
        """Lightning's base takes no arguments (and its subclasses may never call this)."""

    # ---- the built-in precision this plugin stands for ------------------------------------------------
    def _numerics_name(self) -> str:
        """The built-in precision whose numerics this plugin uses (Lightning's base does nothing: float32)."""
        return "32-true"

    def _make_numerics(self) -> NumericPrecision:
        numerics = _BY_NAME[self._numerics_name()](self.device_type)
        numerics.cache_casts = False  # Lightning's Trainer plugins autocast without the weight-cast cache
        return numerics

    @property
    def numerics(self) -> NumericPrecision:
        """The built-in precision doing the arithmetic (built once, on first use)."""
        made = self.__dict__.get("_numerics")
        if made is None:
            made = self.__dict__["_numerics"] = self._make_numerics()
        return made  # type: ignore[no-any-return]

    @property  # type: ignore[misc]
    def name(self) -> str:  # type: ignore[override]
        """The registered name of the numerics (what selection, checkpoints and Fabric check)."""
        return self.numerics.name

    # ---- who drives the step ---------------------------------------------------------------------------
    @property
    def takes_over_steps(self) -> bool:
        """Whether a subclass rewrote one of Lightning's step methods (the loop then calls them, in order)."""
        return any(overrides(self, method) for method in STEP_METHODS)

    @contextlib.contextmanager
    def attached(self, loop: PrecisionLoop) -> Iterator[None]:
        """Lend ``loop`` to the plugin's step methods for the length of one fit."""
        self._loop = loop
        try:
            yield
        finally:
            self.__dict__.pop("_loop", None)

    # ---- the loop's questions, answered by the numerics -------------------------------------------------
    @property
    def param_dtype(self) -> torch.dtype | None:
        return self.numerics.param_dtype

    @property
    def compute_dtype(self) -> torch.dtype:
        return self.numerics.compute_dtype

    @property
    def _desired_input_dtype(self) -> torch.dtype:
        """Lightning's private name of the dtype floating inputs become (its mixed, half and FSDP plugins keep it):
        the compute dtype, unless a subclass set its own."""
        given = self.__dict__.get("_given_input_dtype")
        return given if given is not None else self.compute_dtype

    @_desired_input_dtype.setter
    def _desired_input_dtype(self, dtype: torch.dtype) -> None:
        self.__dict__["_given_input_dtype"] = dtype

    @property
    def uses_autocast(self) -> bool:
        return self.numerics.uses_autocast or any(overrides(self, method) for method in CONTEXT_METHODS)

    @property
    def needs_help_with_steps(self) -> bool:
        return self.numerics.needs_help_with_steps or self.takes_over_steps

    def fsdp_mixed_precision(self) -> Any:
        return self.numerics.fsdp_mixed_precision()

    def convert_module(self, module: torch.nn.Module) -> torch.nn.Module:
        return self.numerics.convert_module(module)

    def tensor_init_context(self) -> contextlib.AbstractContextManager[Any]:
        return self.numerics.tensor_init_context()

    def module_init_context(self) -> contextlib.AbstractContextManager[Any]:
        """Where a module is built (``fabric.init_module``): the numerics' dtype (a subclass's
        ``tensor_init_context`` is not called from here, as in Lightning)."""
        return self.numerics.tensor_init_context()

    @default_hook
    def convert_input(self, data: Any) -> Any:
        return self.numerics.convert_input(data)

    def convert_output(self, data: Any) -> Any:
        return self.numerics.convert_output(data)

    @default_hook
    def forward_context(self) -> contextlib.AbstractContextManager[Any]:
        return self.numerics.forward_context()

    @default_hook
    def train_step_context(self) -> contextlib.AbstractContextManager[Any]:
        return self.forward_context()

    @default_hook
    def val_step_context(self) -> contextlib.AbstractContextManager[Any]:
        return self.forward_context()

    @default_hook
    def test_step_context(self) -> contextlib.AbstractContextManager[Any]:
        return self.forward_context()

    @default_hook
    def predict_step_context(self) -> contextlib.AbstractContextManager[Any]:
        return self.forward_context()

    def step(self, optimizer: torch.optim.Optimizer, closure: Any = None) -> Any:
        """The strategy's step: the numerics' own, or Lightning's ``optimizer_step`` once the plugin took over."""
        loop = self._loop
        if loop is None:
            return self.numerics.step(optimizer, closure)
        return self.optimizer_step(optimizer, loop.module, closure if closure is not None else _nothing)

    def unscale(self, optimizer: torch.optim.Optimizer) -> None:
        if self._loop is None:
            self.numerics.unscale(optimizer)

    def update(self) -> None:
        if self._loop is None:  # a plugin that took over updates its scaler in optimizer_step, as Lightning's does
            self.numerics.update()

    def state_dict(self) -> dict[str, Any]:
        return self.numerics.state_dict() or {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if state_dict:
            self.numerics.load_state_dict(state_dict)

    # ---- Lightning's step methods ----------------------------------------------------------------------
    @default_hook
    def connect(self, model: Any, optimizers: list[Any], lr_schedulers: list[Any]) -> tuple[Any, list[Any], list[Any]]:
        """Lightning's hook to wrap the model or optimizers once they exist; the default keeps them."""
        return model, optimizers, lr_schedulers

    @default_hook
    def pre_backward(self, tensor: torch.Tensor, module: Any) -> torch.Tensor:
        if self._loop is not None:
            self._loop.call_hook("on_before_backward", tensor)
        return tensor

    @default_hook
    def backward(  # type: ignore[override]  # Lightning's arguments; the loss alone still works
        self, tensor: torch.Tensor, model: Any = None, optimizer: Any = None, *args: Any, **kwargs: Any
    ) -> None:
        """Lightning's ``backward(tensor, model, optimizer)``; called with the loss alone, the numerics' backward.

        Lightning Fabric's form, ``backward(tensor, module, *args)``, is told apart by what the Trainer's never holds:
        a module without a ``backward`` method (a plain ``nn.Module``), or a third argument that is no optimizer;
        it runs :meth:`_fabric_backward`."""
        loop = self._loop
        if loop is not None:
            loop.module_backward(tensor, *args, **kwargs)
        elif model is None:
            self.numerics.backward(tensor, *args, **kwargs)
        elif (
            self.__dict__.get("_fabric_call")
            or not callable(getattr(model, "backward", None))
            or not _optimizer_or_none(optimizer)
        ):
            given = (optimizer, *args) if optimizer is not None or args else ()  # the third is Fabric's first
            self._fabric_backward(tensor, model, *given, **kwargs)
        else:
            model.backward(tensor, *args, **kwargs)

    def _fabric_backward(self, tensor: torch.Tensor, model: Any, *args: Any, **kwargs: Any) -> None:
        """Lightning Fabric's ``backward(tensor, module, *args, **kwargs)``: the loss's own backward with them."""
        tensor.backward(*args, **kwargs)  # type: ignore[no-untyped-call]

    @default_hook
    def post_backward(self, tensor: torch.Tensor, module: Any) -> torch.Tensor:
        detached = tensor.detach()
        if self._loop is not None:
            self._loop.call_hook("on_after_backward")
        return detached

    @default_hook
    def _after_closure(self, model: Any, optimizer: Any) -> None:
        if self._loop is not None:
            self._loop.after_closure(optimizer)

    @default_hook
    def _wrap_closure(self, model: Any, optimizer: Any, closure: Callable[[], Any]) -> Any:
        """Run the closure, then the hooks that need its gradients, before the optimizer steps."""
        result = closure()
        self._after_closure(model, optimizer)
        return result

    @default_hook
    def optimizer_step(
        self, optimizer: Any, model: Any = None, closure: Callable[[], Any] | None = None, **kwargs: Any
    ) -> Any:
        """Lightning's ``optimizer_step(optimizer, model, closure)``; called as Lightning Fabric's plugins are,
        with the optimizer alone (no model, no closure), the optimizer steps with ``kwargs`` and nothing else."""
        if model is None and closure is None:
            return optimizer.step(**kwargs)
        return optimizer.step(closure=partial(self._wrap_closure, model, optimizer, closure or _nothing), **kwargs)

    @default_hook
    def clip_gradients(self, optimizer: Any, clip_val: float = 0.0, gradient_clip_algorithm: Any = "norm") -> None:
        if clip_val <= 0:
            return
        algorithm = str(getattr(gradient_clip_algorithm, "value", gradient_clip_algorithm))
        if self._loop is not None and not any(overrides(self, method) for method in _CLIPPING_OWN):
            self._loop.clip(optimizer, float(clip_val), algorithm)
        elif algorithm == "value":
            self.clip_grad_by_value(optimizer, clip_val)
        elif algorithm == "norm":
            self.clip_grad_by_norm(optimizer, clip_val)

    @default_hook
    def clip_grad_by_value(self, optimizer: Any, clip_val: float) -> None:
        import torch

        torch.nn.utils.clip_grad_value_(list(self.main_params(optimizer)), clip_value=clip_val)

    @default_hook
    def clip_grad_by_norm(self, optimizer: Any, clip_val: float) -> None:
        import torch

        torch.nn.utils.clip_grad_norm_(list(self.main_params(optimizer)), clip_val)

    @default_hook
    def main_params(self, optimizer: Any) -> Iterator[Any]:
        """The parameters the optimizer updates (what clipping works on)."""
        for group in optimizer.param_groups:
            yield from group["params"]

    @default_hook
    def unscale_gradients(self, optimizer: Any) -> None:
        self.numerics.unscale(optimizer)

    def teardown(self) -> None:
        """Called when a fit/validate/test/predict call ends: release what the plugin holds."""

    # ---- Lightning's checkpoint hooks (CheckpointHooks) -------------------------------------------------
    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Lightning's checkpoint hook, kept for subclasses that call ``super()``."""

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Lightning's checkpoint hook, kept for subclasses that call ``super()``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


Precision.register(Float32Precision)


def is_plugin(precision: object, plugin_class: type[Precision] = Precision) -> bool:
    """Whether ``precision`` is really a ``plugin_class`` object (a plugin given to the Trainer or Fabric), not a
    built-in precision that only answers ``isinstance`` for it."""
    return plugin_class in type(precision).__mro__


# ---- Lightning Fabric's calls into a precision ----------------------------------------------------------------
def fabric_backward(precision: Any, tensor: torch.Tensor, module: Any, *args: Any, **kwargs: Any) -> None:
    """``fabric.backward(tensor, *args, model=module, **kwargs)`` through ``precision``: a plugin's ``pre_backward``,
    ``backward(tensor, module, *args, **kwargs)`` and ``post_backward`` (Lightning Fabric's order; what the first
    returns is not passed on, as there), a built-in precision's own ``backward``."""
    if not is_plugin(precision):
        precision.backward(tensor, *args, **kwargs)
        return
    precision.pre_backward(tensor, module)
    precision.__dict__["_fabric_call"] = True  # ``backward(tensor, module)`` is Fabric's form, not the Trainer's
    try:
        precision.backward(tensor, module, *args, **kwargs)
    finally:
        precision.__dict__.pop("_fabric_call", None)
    precision.post_backward(tensor, module)


def fabric_optimizer_step(precision: Any, optimizer: Any, unscaled: set[int] | None = None, **kwargs: Any) -> Any:
    """A set-up optimizer's ``step(**kwargs)`` through ``precision``: a plugin's own ``optimizer_step(optimizer,
    **kwargs)`` where a subclass wrote one (Lightning Fabric's call), else the numerics' step (a scaler unscales,
    steps and updates). ``unscaled`` holds the ids of optimizers clipping already unscaled."""
    if is_plugin(precision) and overrides(precision, "optimizer_step"):
        output = precision.optimizer_step(optimizer, **kwargs)
    elif precision.needs_help_with_steps:
        closure = kwargs.pop("closure", None)
        output = closure() if closure is not None else None
        if unscaled is None or id(optimizer) not in unscaled:
            precision.unscale(optimizer)
        stepped = precision.step(optimizer)
        output = stepped if output is None else output
        precision.update()
    else:
        output = precision.step(optimizer, kwargs.pop("closure", None))
        precision.update()
    if unscaled is not None:
        unscaled.discard(id(optimizer))
    return output


def unscale_for_clipping(precision: Any, optimizer: Any, unscaled: set[int]) -> None:
    """Gradients back to their true values before ``fabric.clip_gradients``: a plugin's own ``unscale_gradients``
    on every call where a subclass wrote one (as Lightning Fabric calls it), else the numerics' once per step."""
    if is_plugin(precision) and overrides(precision, "unscale_gradients"):
        precision.unscale_gradients(optimizer)
    elif id(optimizer) not in unscaled:
        precision.unscale(optimizer)
    unscaled.add(id(optimizer))


def clipping_params(precision: Any, optimizer: Any) -> list[Any]:
    """The parameters whose gradients clipping works on: a plugin's ``main_params(optimizer)`` where a subclass
    wrote one, else the optimizer's; those with a gradient."""
    if is_plugin(precision) and overrides(precision, "main_params"):
        params = list(precision.main_params(optimizer))
    else:
        params = [p for group in optimizer.param_groups for p in group["params"]]
    return [p for p in params if p.grad is not None]


def init_context_of(precision: Any) -> contextlib.AbstractContextManager[Any]:
    """The dtype context a forward or ``autocast`` block adds for a precision with its own parameter dtype: the
    numerics' (a plugin subclass's ``tensor_init_context`` is for creating tensors only, as in Lightning)."""
    numerics = precision.numerics if is_plugin(precision) else precision
    return numerics.tensor_init_context()  # type: ignore[no-any-return]


def _optimizer_or_none(value: object) -> bool:
    """The third argument of the Trainer's ``backward``: an optimizer (something that steps) or None."""
    return value is None or callable(getattr(value, "step", None))


def _nothing() -> None:
    """Manual optimisation's closure: ``training_step`` already ran backward."""
    return None
