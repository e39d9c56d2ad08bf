"""What ``fabric.setup`` and ``setup_dataloaders`` hand back: the user's objects, run through the strategy.

- :class:`FabricModule` (Lightning's ``_FabricModule``): ``forward`` runs with the precision's input cast and
  autocast and through the strategy's wrapper (DDP's gradient hooks, FSDP's gathers); methods marked with
  ``mark_forward_method`` (``training_step`` & co. by default) take the same road; any other attribute is the
  user's module's own, and ``state_dict`` has the user's keys (no ``_forward_module.`` or ``module.`` prefix).
- :class:`FabricOptimizer` (``_FabricOptimizer``): ``step`` goes through the precision (a gradient scaler, a
  plugin's loss scale) and then the callbacks' ``on_after_optimizer_step``; ``isinstance(opt, torch.optim.Adam)``
  still holds, and everything else is the torch optimizer's.
- :class:`FabricDataLoader` (``_FabricDataLoader``): each ``iter()`` tells a distributed sampler its epoch
  and moves batches to the device.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from types import MethodType
from typing import TYPE_CHECKING, Any

import torch

from ..core.optimizer import OptimizerWrapper
from ..data.batches import make_transfer
from ..errors import MisconfigurationException
from ..precision.lightning.base import init_context_of

if TYPE_CHECKING:
    from ..precision.base import NumericPrecision
    from ..strategies.base import PreparedModule, Strategy

__all__ = [
    "BackwardRequired",
    "FabricDataLoader",
    "FabricModule",
    "FabricOptimizer",
    "is_wrapped",
    "requires_fabric_backward",
    "speaks_lightning",
    "unwrap",
    "unwrap_compiled",
]

_STEP_METHODS = ("training_step", "validation_step", "test_step", "predict_step")

#: True while ``fabric.backward`` runs: a precision that must see the backward (a loss scale) refuses a bare
#: ``loss.backward()`` through a hook on the forward's outputs.
_in_fabric_backward = False


def set_in_backward(value: bool) -> None:
    global _in_fabric_backward
    _in_fabric_backward = value


def unwrap_compiled(module: Any) -> tuple[Any, Any]:
    """``(original, compiled)`` for ``torch.compile(module)``; ``(module, None)`` for anything else."""
    original = getattr(module, "_orig_mod", None)
    if isinstance(module, torch.nn.Module) and isinstance(original, torch.nn.Module):
        return original, module
    return module, None


class FabricModule(torch.nn.Module):
    """The user's module as ``fabric.setup`` returns it (see the module docstring)."""

    def __init__(
        self,
        prepared: PreparedModule,
        strategy: Strategy,
        precision: NumericPrecision,
        *,
        compiled: torch.nn.Module | None = None,
        device: torch.device | None = None,
    ) -> None:
        super().__init__()
        self._forward_module = prepared.wrapped if prepared.wrapped is not None else prepared.module
        self._original_module = prepared.module
        # Plain attributes (not submodules: the compiled object shares the original's parameters).
        object.__setattr__(self, "_compiled_module", compiled)
        self._prepared = prepared
        self._strategy = strategy
        self._precision = precision
        self._forward_methods = set(_STEP_METHODS)
        #: Forward methods go through the wrapper only where there is one (DDP, FSDP); on one device a
        #: ``training_step`` is a plain call, as in Lightning.
        self._redirects = prepared.wrapped is not None
        self._fabric_device = device
        #: whether ``loss.backward()`` must be ``fabric.backward(loss)`` (a hook on the outputs refuses it)
        self._requires_fabric_backward = requires_fabric_backward(strategy, precision)
        self._fabric_module_initialized = True

    @property
    def module(self) -> torch.nn.Module:
        """The user's own module (the one set up, not a wrapper)."""
        return self._original_module

    @property
    def device(self) -> torch.device:
        """Where the module was placed (its first parameter's device with ``move_to_device=False``)."""
        if self._fabric_device is not None:
            return self._fabric_device
        first = next(self._original_module.parameters(), None)
        return first.device if first is not None else torch.device("cpu")

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        compiled = self.__dict__["_compiled_module"]
        return self._run(compiled if compiled is not None else self._original_module, args, kwargs)

    def _run(self, method: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``method`` with the precision's input cast and contexts, through the strategy's wrapper."""
        precision = self._precision
        args, kwargs = precision.convert_input((args, kwargs))
        if precision.uses_autocast or precision.param_dtype is not None:
            with precision.forward_context(), init_context_of(precision):
                output = self._prepared.call(method, *args, **kwargs)
        else:
            output = self._prepared.call(method, *args, **kwargs)
        output = precision.convert_output(output)
        _guard_backward(output, self._requires_fabric_backward)
        return output

    def state_dict(self, *args: Any, **kwargs: Any) -> Any:
        return self._original_module.state_dict(*args, **kwargs)

    def load_state_dict(self, state_dict: Any, strict: bool = True, assign: bool = False) -> Any:
        return self._original_module.load_state_dict(state_dict, strict=strict, assign=assign)

    def mark_forward_method(self, method: MethodType | str) -> None:
        """Route ``module.<method>(...)`` through the strategy's wrapper and precision, as ``forward`` is."""
        if not isinstance(method, (MethodType, str)):
            raise MisconfigurationException(
                f"mark_forward_method({method!r}): expected a method of the module or its name (str), got a "
                f"{type(method).__name__}."
            )
        name = method if isinstance(method, str) else method.__name__
        if name == "forward":
            raise MisconfigurationException(
                "mark_forward_method('forward'): forward always runs through the strategy; mark other methods."
            )
        if not isinstance(getattr(self._original_module, name, None), MethodType):
            raise MisconfigurationException(
                f"mark_forward_method({name!r}): {type(self._original_module).__name__}.{name} does not exist or is "
                "not a method."
            )
        self._forward_methods.add(name)
        self._strategy.register_forward_method(self._original_module, name)

    def _forward_method(self, name: str) -> Callable[..., Any]:
        method = getattr(self._original_module, name)

        @functools.wraps(method)
        def call(*args: Any, **kwargs: Any) -> Any:
            return self._run(method, args, kwargs)

        return call

    def _tracked(self, method: Callable[..., Any], name: str) -> Callable[..., Any]:
        """``method`` refusing to run a submodule outside the wrapper (DDP would miss its gradients)."""
        original = self._original_module

        @functools.wraps(method)
        def call(*args: Any, **kwargs: Any) -> Any:
            called: list[bool] = []
            handles = [m.register_forward_hook(lambda *_: called.append(True)) for m in original.modules()]
            try:
                output = method(*args, **kwargs)
            finally:
                for handle in handles:
                    handle.remove()
            if called:
                raise MisconfigurationException(
                    f"{type(original).__name__}.{name}() ran the model outside the strategy's wrapper, so its "
                    f"gradients would not be synchronised; mark it first: model.mark_forward_method({name!r})."
                )
            return output

        return call

    def __getattr__(self, item: str) -> Any:
        state = self.__dict__
        if state.get("_redirects") and item in state.get("_forward_methods", ()):
            return self._forward_method(item)
        try:
            return super().__getattr__(item)
        except AttributeError:
            original = super().__getattr__("_original_module")
            attr = getattr(original, item)
            if state.get("_redirects") and inspect.ismethod(attr):
                return self._tracked(attr, item)
            return attr

    def __setattr__(self, name: str, value: Any) -> None:
        if not self.__dict__.get("_fabric_module_initialized", False):
            super().__setattr__(name, value)
            return
        original = self._original_module
        on_original = hasattr(original, name)
        on_wrapper = name in dir(self)
        if on_original or not on_wrapper:
            setattr(original, name, value)
        if on_wrapper:
            super().__setattr__(name, value)


class BackwardRequired(MisconfigurationException, RuntimeError):
    """``loss.backward()`` where the strategy or precision must run it (Lightning raises a ``RuntimeError``)."""


#: The precisions whose backward is their own (a loss scale, autocast's bookkeeping), as in Lightning Fabric.
_MIXED = ("16-mixed", "bf16-mixed")


def requires_fabric_backward(strategy: Strategy, precision: NumericPrecision) -> bool:
    """Whether backward must go through ``fabric.backward``: a strategy that rewrote ``backward``, a mixed or
    scaling precision, or a precision plugin that rewrote ``pre_backward``/``backward``/``post_backward``."""
    from ..strategies.base import Strategy

    return (
        getattr(type(strategy), "backward", None) is not Strategy.backward
        or precision.needs_help_with_steps
        or getattr(precision, "name", None) in _MIXED
    )


def _guard_backward(output: Any, required: bool) -> None:
    """A hook on each output tensor that refuses a bare ``loss.backward()`` when ``required`` (registered in every
    case, as Lightning does, so the tensors look the same)."""

    def check(*_: Any) -> None:
        if required and not _in_fabric_backward:
            raise BackwardRequired(
                "This strategy and precision requires you to call `fabric.backward(loss)` rather than "
                "`loss.backward()`: it runs the backward pass itself (a loss scale, a mixed precision or a "
                "strategy's own backward)."
            )

    if isinstance(output, torch.Tensor):
        if output.requires_grad:
            output.register_hook(check)  # type: ignore[no-untyped-call]
    elif isinstance(output, (list, tuple)):
        for item in output:
            _guard_backward(item, required)
    elif isinstance(output, dict):
        for item in output.values():
            _guard_backward(item, required)


class FabricOptimizer(OptimizerWrapper):
    """A torch optimizer whose ``step`` runs through the precision (see the module docstring); what it shares with
    ``LightningOptimizer`` (the class, the state calls, reading attributes through) is :class:`OptimizerWrapper`'s."""

    class_prefix = "Fabric"
    own_attributes = ("_optimizer", "_strategy", "_precision", "_callbacks", "_unscaled")

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        strategy: Strategy,
        precision: NumericPrecision,
        callbacks: list[Any],
        unscaled: set[int],
    ) -> None:
        self._wrap(optimizer, _strategy=strategy, _precision=precision, _callbacks=callbacks, _unscaled=unscaled)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """The strategy's step, as in Lightning Fabric: a user's strategy written to Lightning's
        ``optimizer_step(optimizer, **kwargs)`` is called, else the precision steps (a plugin's own
        ``optimizer_step``, or the numerics' scaler); then the callbacks' ``on_after_optimizer_step``."""
        from ..precision.lightning.base import fabric_optimizer_step

        optimizer, strategy = self._optimizer, self._strategy
        kwargs = {"closure": closure} if closure is not None else {}
        if speaks_lightning(strategy, "optimizer_step"):
            output = strategy.optimizer_step(optimizer, **kwargs)
            self._unscaled.discard(id(optimizer))
        else:
            output = fabric_optimizer_step(self._precision, optimizer, self._unscaled, **kwargs)
        for callback in self._callbacks:
            hook = getattr(callback, "on_after_optimizer_step", None)
            if callable(hook):
                hook(strategy=strategy, optimizer=optimizer)
        return output

    @property
    def param_groups(self) -> list[dict[str, Any]]:
        return self._optimizer.param_groups

    @property
    def state(self) -> Any:
        return self._optimizer.state

    @property
    def defaults(self) -> dict[str, Any]:
        return self._optimizer.defaults


class FabricDataLoader:
    """A ``DataLoader`` that sets its sampler's epoch on each ``iter()`` and moves batches to ``device``."""

    def __init__(self, dataloader: Any, device: torch.device | None, strategy: Strategy) -> None:
        self.__dict__.update(dataloader.__dict__)  # batch_size, dataset, sampler... read as on the original
        self._dataloader = dataloader
        self._device = device
        self._move = make_transfer(device, None) if device is not None else None
        self._strategy = strategy
        self._num_iter_calls = 0

    @property
    def device(self) -> torch.device | None:
        return self._device

    def __len__(self) -> int:
        return len(self._dataloader)

    def __iter__(self) -> Iterator[Any]:
        self._strategy.set_epoch(self._dataloader, self._num_iter_calls)
        self._num_iter_calls += 1
        move = self._move
        if move is None:
            yield from self._dataloader
            return
        for batch in self._dataloader:
            yield move(batch)


def speaks_lightning(strategy: object, method: str) -> bool:
    """Whether ``strategy``'s class rewrote ``method`` in Lightning Fabric's form (``backward(tensor, module, *args,
    **kwargs)``, ``optimizer_step(optimizer, **kwargs)``): a user's subclass Fabric must call as Lightning's does.
    accelplug's own form takes the ``precision``; a class that keeps the base's method is not rewritten."""
    from ..strategies.base import Strategy

    own = getattr(type(strategy), method, None)
    if own is None or own is getattr(Strategy, method):
        return False
    try:
        parameters = inspect.signature(own).parameters
    except (TypeError, ValueError):
        return False
    return "precision" not in parameters


def unwrap(obj: Any) -> Any:
    """The user's object behind a Fabric wrapper (and behind ``torch.compile``), anything else as it is."""
    obj, _ = unwrap_compiled(obj)
    if isinstance(obj, FabricModule):
        return obj._original_module
    if isinstance(obj, FabricOptimizer):
        return obj.optimizer
    if isinstance(obj, FabricDataLoader):
        return obj._dataloader
    return obj


def is_wrapped(obj: object) -> bool:
    """Whether ``obj`` was set up by Fabric (a module, optimizer or dataloader ``setup*`` returned)."""
    obj, _ = unwrap_compiled(obj)
    return isinstance(obj, (FabricModule, FabricOptimizer, FabricDataLoader))
