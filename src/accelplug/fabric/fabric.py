"""``Fabric``: your own training loop on any accelerator, with Lightning Fabric 2.6's API.

The hardware comes from the Trainer's selection and plugin registry (:mod:`.connector`), modules and optimizers
are prepared by the strategy's own steps (``Strategy.setup_module`` then ``setup_optimizers``: the Trainer's
path, cut where Fabric's user builds the optimizers), checkpoints are the Trainer's file format
(:mod:`.checkpoints`). A script written for Lightning Fabric runs with its import changed::

    from accelplug.fabric import Fabric          # was: from lightning.fabric import Fabric

    fabric = Fabric(accelerator="auto", devices=2, precision="bf16-mixed")
    fabric.launch()
    model, optimizer = fabric.setup(model, optimizer)
    loader = fabric.setup_dataloaders(loader)
    for x, y in loader:
        optimizer.zero_grad()
        fabric.backward(loss_fn(model(x), y))
        optimizer.step()
"""

from __future__ import annotations

import functools
import inspect
import os
import warnings
from collections.abc import Callable, Generator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

import torch

from ..data.batches import apply_to_tensors, convert_tensors_to_scalars, convert_to_tensors, move_data_to_device
from ..distributed.collectives import reduce_op_for
from ..errors import MisconfigurationException, PossibleUserWarning
from ..overrides import overrides
from ..precision.lightning.base import init_context_of
from ..precision.mixed import announce_amp
from ..seed import seed_everything as _seed_everything
from ..selection import RunSetup
from . import collectives
from .connector import plan
from .preparation import Preparation
from .wrappers import (
    FabricDataLoader,
    FabricModule,
    FabricOptimizer,
    set_in_backward,
    speaks_lightning,
    unwrap,
    unwrap_compiled,
)

if TYPE_CHECKING:
    from ..accelerator import Accelerator
    from ..precision.base import NumericPrecision
    from ..strategies.base import Strategy

__all__ = ["Fabric"]


def _no_function(_fabric: Any) -> None:
    """``launch()``'s default: bring the processes up and run nothing (a marker, never called)."""


class Fabric:
    """Runs a hand-written training loop on the selected accelerator, devices, strategy and precision.

    Arguments are keyword-only with Lightning's names and meanings; ``accelerator``, ``strategy``, ``devices``
    and ``precision`` accept what ``Trainer`` accepts (plugin names included). ``callbacks`` are objects whose
    methods :meth:`call` runs; ``loggers`` are objects with ``log_metrics(metrics, step)``.
    """

    def __init__(
        self,
        *,
        accelerator: str | Accelerator | type[Accelerator] = "auto",
        strategy: str | Strategy = "auto",
        devices: int | str | list[int] | tuple[int, ...] = "auto",
        num_nodes: int = 1,
        precision: str | int | None = None,
        plugins: Any = None,
        callbacks: Any = None,
        loggers: Any = None,
    ) -> None:
        self._plan: RunSetup = plan(accelerator, strategy, devices, num_nodes, precision, plugins)
        self._strategy: Strategy = self._plan.strategy
        from ..selection import attach_environment, cluster_environment, give_strategy_its_plan

        attach_environment(self._strategy, cluster_environment(self._plan.cluster_environment))
        give_strategy_its_plan(self._strategy, self._plan.selection, self._plan.num_nodes)
        self._precision: NumericPrecision = self._plan.precision
        announce_amp(self._plan.selection.precision, "accelplug.fabric", sixteen="16-bit")
        self._accelerator: Accelerator = self._plan.selection.accelerator
        self._callbacks: list[Any] = _as_list(callbacks, "callbacks")
        self._loggers: list[Any] = _as_list(loggers, "loggers")
        for logger in self._loggers:
            if not callable(getattr(logger, "log_metrics", None)):
                raise MisconfigurationException(
                    f"loggers={loggers!r}: {logger!r} has no log_metrics(metrics, step) method, so it cannot log."
                )
        self._launched = False
        self._environment_up = False
        #: Optimizers whose gradients the precision unscaled since their last step (clipping does it first).
        self._unscaled: set[int] = set()
        self._prepare = Preparation(self._strategy, self._precision, self._callbacks, self._unscaled)
        self._wrap_run()

    def _wrap_run(self) -> None:
        if type(self).run is not Fabric.run:  # Lightning's subclass pattern: fabric.run(...) runs launched
            if _launched_by_lightning_cli():
                raise _WrongObject(
                    "Overriding `Fabric.run()` and launching from the CLI is not allowed. Run the script normally, "
                    "or call fabric = Fabric(...); fabric.setup(...) directly."
                )
            user_run = type(self).run.__get__(self)
            self.run = lambda *a, **k: self.launch(lambda _fabric: user_run(*a, **k))  # type: ignore[method-assign]

    def __getstate__(self) -> dict[str, Any]:
        """What a process started with ``ddp_spawn`` receives (``run`` is wrapped again there)."""
        return {k: v for k, v in self.__dict__.items() if k != "run"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._wrap_run()

    # ---- where this process runs ---------------------------------------------------------------------
    @property
    def accelerator(self) -> Accelerator:
        return self._accelerator

    @property
    def strategy(self) -> Strategy:
        return self._strategy

    @property
    def device(self) -> torch.device:
        """This process's device (create tensors on it with ``device=fabric.device``)."""
        return self._strategy.root_device or self._plan.selection.root_device

    @property
    def global_rank(self) -> int:
        return self._strategy.global_rank

    @property
    def local_rank(self) -> int:
        return self._strategy.local_rank

    @property
    def node_rank(self) -> int:
        """The index of this machine, as the strategy's cluster environment answers it (0 on one process)."""
        return int(getattr(self._strategy, "node_rank", 0))

    @property
    def world_size(self) -> int:
        return self._strategy.world_size

    @property
    def is_global_zero(self) -> bool:
        return self._strategy.is_global_zero

    @property
    def loggers(self) -> list[Any]:
        return self._loggers

    @property
    def logger(self) -> Any:
        """The first logger (the main one)."""
        if not self._loggers:
            raise _NoLogger(
                "fabric.logger: no loggers were given (list index out of range); pass Fabric(loggers=[...])."
            )
        return self._loggers[0]

    # ---- launching -----------------------------------------------------------------------------------
    def launch(self, function: Callable[..., Any] = _no_function, *args: Any, **kwargs: Any) -> Any:
        """Start one process per device if needed (see :mod:`.launching`), set this one up, run ``function``.

        Without a function it returns None; calling it again without one does nothing. ``None`` is not "no
        function": it is what ``fabric.launch(train(fabric))`` passes, a mistake refused as Lightning does.
        """
        from .launching import launch

        if _launched_by_lightning_cli():
            raise _LaunchedByCli(
                "This script was launched through the CLI, and processes have already been created. Calling  "
                "`.launch()` again is not allowed: remove fabric.launch() from the script."
            )
        if function is not _no_function:
            _check_function(function)
            return launch(self._plan, self._bring_up, functools.partial(function, self, *args, **kwargs))
        if self._launched:
            return None
        return launch(self._plan, self._bring_up, None)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """Override in a subclass: ``fabric.run(...)`` then runs it after :meth:`launch` (Lightning's pattern)."""

    def _bring_up(self) -> None:
        """This process's environment: the device, and the process group for a distributed strategy."""
        self._launched = True
        if not self._environment_up:
            self._strategy.setup_environment(self._accelerator, self._plan.selection.root_device)
            self._environment_up = True
            from ..distributed.rank_zero import set_rank

            set_rank(self._strategy.global_rank)

    def _require_launched(self, what: str) -> None:
        if not self._strategy.is_distributed:
            if not self._environment_up:
                self._bring_up()
            return
        if not self._launched:
            raise MisconfigurationException(
                f"fabric.{what}: strategy={self._strategy.name!r} runs one process per device, so call "
                "fabric.launch() first (or start the script with `accelplug launch --devices N script.py`, "
                "then call fabric.launch())."
            )

    # ---- modules and optimizers ----------------------------------------------------------------------
    def setup(
        self,
        module: torch.nn.Module,
        *optimizers: torch.optim.Optimizer,
        scheduler: Any = None,
        move_to_device: bool = True,
        _reapply_compile: bool = True,
    ) -> Any:
        """The module (and optimizers) prepared for this run: ``model, opt = fabric.setup(model, opt)``.

        Returns the module alone without optimizers, else ``(module, *optimizers)`` and ``scheduler`` last
        when one is passed. Optimizers built on the module's parameters keep working under FSDP: the
        sharded parameters replace the originals in them. A ``torch.compile``'d module runs compiled inside
        the strategy's wrapper (``_reapply_compile`` is accepted for Lightning's signature).
        """
        self._require_launched("setup")
        original = self._prepare.check_module(module, "setup")
        for index, optimizer in enumerate(optimizers):
            self._prepare.check_optimizer(optimizer, index, "setup")
            self._prepare.check_steps(optimizer, index, original)
        fabric_module = self._prepare.module(module, move_to_device, self.device)
        wrapped = self._prepare.optimizers(optimizers)
        self._attach(original, wrapped)
        self.call("on_after_setup", fabric=self, module=fabric_module)
        if not wrapped:
            return fabric_module
        return (fabric_module, *wrapped, scheduler) if scheduler is not None else (fabric_module, *wrapped)

    def setup_module(
        self, module: torch.nn.Module, move_to_device: bool = True, _reapply_compile: bool = True
    ) -> FabricModule:
        """The module alone (for FSDP: set it up, then build the optimizer on ``model.parameters()``)."""
        self._require_launched("setup_module")
        original = self._prepare.check_module(module, "setup_module")
        fabric_module = self._prepare.module(module, move_to_device, self.device)
        self._attach(original, None)
        return fabric_module

    def _attach(self, module: torch.nn.Module, optimizers: Any) -> None:
        """A ``LightningModule`` set up here logs through this Fabric, finds its optimizers in ``self.optimizers()``
        and its hooks run from :meth:`call` (it joins the callbacks once), as with Lightning's Fabric, so one
        module serves a Trainer and a loop."""
        from ..core.module import LightningModule

        if isinstance(module, LightningModule):
            module._fabric = self
            if optimizers is not None:
                module._fabric_optimizers = list(optimizers)
            if not any(callback is module for callback in self._callbacks):
                self._callbacks.append(module)

    def setup_optimizers(self, *optimizers: torch.optim.Optimizer) -> Any:
        """Optimizers for modules already set up; one optimizer comes back alone, several as a tuple."""
        self._require_launched("setup_optimizers")
        _check_separate_setup(self._strategy)
        if not optimizers:
            raise MisconfigurationException(
                "`setup_optimizers` requires at least one optimizer as input: fabric.setup_optimizers(optimizer)."
            )
        for index, optimizer in enumerate(optimizers):
            self._prepare.check_optimizer(optimizer, index, "setup_optimizers")
            self._prepare.check_not_meta(optimizer, index)
        wrapped = self._prepare.optimizers(optimizers)
        return wrapped[0] if len(wrapped) == 1 else tuple(wrapped)

    def setup_dataloaders(
        self, *dataloaders: Any, use_distributed_sampler: bool = True, move_to_device: bool = True
    ) -> Any:
        """Each loader sharded across processes (a ``DistributedSampler``) and moving batches to the device."""
        self._require_launched("setup_dataloaders")
        device = self.device if move_to_device else None
        out = self._prepare.dataloaders(dataloaders, use_distributed_sampler, device, self.global_rank)
        return out[0] if len(out) == 1 else out

    # ---- the step ------------------------------------------------------------------------------------
    def backward(self, tensor: torch.Tensor, *args: Any, model: Any = None, **kwargs: Any) -> None:
        """``loss.backward()`` through the strategy and the precision (a loss scale), with ``backward``'s own arguments.

        As in Lightning Fabric: a strategy that rewrote ``backward`` runs it (``backward(tensor, module, *args,
        **kwargs)``, the module being the one ``model=`` names, else None); otherwise a precision plugin runs its
        ``pre_backward``, ``backward`` and ``post_backward``."""
        from ..precision.lightning.base import fabric_backward
        from ..strategies.base import Strategy

        module = model._forward_module if isinstance(unwrap_compiled(model)[0], FabricModule) else model
        if isinstance(module, FabricModule):  # model=torch.compile(fabric_module)
            module = module._forward_module
        strategy = self._strategy
        set_in_backward(True)
        try:
            if not isinstance(strategy, Strategy) or speaks_lightning(strategy, "backward"):
                strategy.backward(tensor, module, *args, **kwargs)  # Lightning Fabric's call
            elif type(strategy).backward is not Strategy.backward:  # a strategy whose engine owns backward
                strategy.backward(tensor, self._precision, *args, **kwargs)
            else:
                fabric_backward(self._precision, tensor, module, *args, **kwargs)
        finally:
            set_in_backward(False)

    def clip_gradients(
        self,
        module: Any,
        optimizer: Any,
        clip_val: float | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        error_if_nonfinite: bool = True,
    ) -> torch.Tensor | None:
        """Clip by value (``clip_val``) or by norm (``max_norm``; returns the total norm before clipping)."""
        if clip_val is not None and max_norm is not None:
            raise MisconfigurationException(
                "Only one of `clip_val` or `max_norm` can be set as this specifies the underlying clipping "
                f"algorithm: fabric.clip_gradients(clip_val={clip_val!r}, max_norm={max_norm!r}) gives both "
                "(clip_val clips each value, max_norm the total norm)."
            )
        if clip_val is None and max_norm is None:
            raise MisconfigurationException(
                "You have to specify either `clip_val` or `max_norm` to do gradient clipping: "
                "fabric.clip_gradients(model, optimizer, max_norm=1.0) (or clip_val=... to clip each value)."
            )
        raw_module, raw_optimizer = unwrap(module), unwrap(optimizer)
        if not isinstance(raw_optimizer, torch.optim.Optimizer):
            raise MisconfigurationException(
                f"fabric.clip_gradients(optimizer={optimizer!r}): expected the optimizer whose gradients to clip."
            )
        from ..precision.lightning.base import unscale_for_clipping

        unscale_for_clipping(self._precision, raw_optimizer, self._unscaled)
        if clip_val is not None:
            self._strategy.clip_gradients_value(raw_module, raw_optimizer, clip_val=clip_val)
            return None
        assert max_norm is not None  # one of the two was given (checked above)
        norm = self._strategy.clip_gradients_norm(
            raw_module, raw_optimizer, max_norm=max_norm, norm_type=norm_type, error_if_nonfinite=error_if_nonfinite
        )
        full = getattr(norm, "full_tensor", None)  # a sharded model's norm is a DTensor
        return full() if callable(full) else norm

    def autocast(self) -> AbstractContextManager[Any]:
        """The precision's forward context, for computation outside ``model(...)``."""
        stack = ExitStack()
        stack.enter_context(self._precision.forward_context())
        stack.enter_context(init_context_of(self._precision))
        return stack

    def no_backward_sync(self, module: Any, enabled: bool = True) -> AbstractContextManager[Any]:
        """Skip the gradient all-reduce of the micro-batches that only accumulate (forward and backward inside)."""
        if not isinstance(unwrap_compiled(module)[0], FabricModule):
            raise _WrongObject(
                "You need to set up the model first before you can call `fabric.no_backward_sync()`: "
                f"model = fabric.setup(model, ...), then pass what setup returned (got a {type(module).__name__})."
            )
        wrapper: FabricModule = unwrap_compiled(module)[0]
        strategy = self._strategy
        if strategy.is_distributed and not overrides(strategy, "no_gradient_sync"):
            from ..distributed.rank_zero import rank_zero_warn

            rank_zero_warn(  # Lightning's warning, enabled or not: the call does nothing with this strategy
                f"The `{type(strategy).__name__}` does not support skipping the gradient synchronization. Remove "
                "`.no_backward_sync()` from your code or choose a different strategy.",
                category=PossibleUserWarning,
            )
            return nullcontext()
        if not enabled or not strategy.is_distributed:
            return nullcontext()
        return strategy.no_gradient_sync(wrapper._prepared.wrapped)

    # ---- collectives ---------------------------------------------------------------------------------
    def barrier(self, name: str | None = None) -> None:
        """Wait until every process got here (the strategy's ``barrier``, given ``name`` where it takes one)."""
        self._require_launched("barrier")
        barrier: Callable[..., None] = self._strategy.barrier
        if _takes(barrier, "name"):
            barrier(name=name)
        else:
            barrier()

    def broadcast(self, obj: Any, src: int = 0) -> Any:
        """Process ``src``'s ``obj`` on every process, through the strategy's ``broadcast``."""
        self._require_launched("broadcast")
        return self._strategy.broadcast(obj, src=src)

    def all_gather(self, data: Any, group: Any = None, sync_grads: bool = False) -> Any:
        """Each tensor of ``data`` from every process, through the strategy's ``all_gather`` (one call per tensor)."""
        self._require_launched("all_gather")
        gather = self._strategy.all_gather
        return apply_to_tensors(
            convert_to_tensors(data, self.device), lambda t: gather(t, group=group, sync_grads=sync_grads)
        )

    def all_reduce(self, data: Any, group: Any = None, reduce_op: Any = "mean") -> Any:
        """Each tensor of ``data`` reduced over the processes, through the strategy's ``all_reduce``."""
        self._require_launched("all_reduce")
        reduce_op_for(reduce_op)  # a wrong name is refused on one process too
        reduce = self._strategy.all_reduce
        return apply_to_tensors(
            convert_to_tensors(data, self.device), lambda t: reduce(t, group=group, reduce_op=reduce_op)
        )

    @contextmanager
    def rank_zero_first(self, local: bool = False) -> Generator[None, None, None]:
        with collectives.rank_zero_first(self.local_rank if local else self.global_rank):
            yield

    # ---- creating and moving -------------------------------------------------------------------------
    def init_tensor(self) -> AbstractContextManager[Any]:
        """Tensors created inside are on the device, in the precision's dtype (the strategy's context)."""
        return self._strategy.tensor_init_context()

    @contextmanager
    def sharded_model(self) -> Generator[None, None, None]:
        """Deprecated in Lightning (2.1) for :meth:`init_module`: a warning, then the block runs as written.

        Lightning's version entered the strategy's old FSDP1 auto-wrap context; accelplug's FSDP shards
        the whole module in ``setup``, so there is nothing to enter and the module is built as it is.
        """
        warnings.warn(
            "`Fabric.sharded_model()` is deprecated in favor of `Fabric.init_module()`.",
            DeprecationWarning,
            stacklevel=3,
        )
        yield

    def init_module(self, empty_init: bool | None = None) -> AbstractContextManager[Any]:
        """A model built inside is created on the device in the precision's dtype (the strategy's context, see
        :mod:`accelplug.strategies.init_contexts`)."""
        self._require_launched("init_module")
        return self._strategy.module_init_context(empty_init=empty_init)

    def to_device(self, obj: Any) -> Any:
        """A module, tensor or collection of tensors on this process's device."""
        if isinstance(obj, torch.nn.Module):
            obj.to(self.device)
            return obj
        return move_data_to_device(obj, self.device)

    # ---- checkpoints ---------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str], state: Mapping[str, Any], filter: Any = None) -> None:
        """Save ``state`` (modules and optimizers as their states); every process must call it.

        The strategy saves it (``strategy.save_checkpoint(path=..., state=..., filter=...)``, as in Lightning), through
        its ``checkpoint_io``; the objects ``setup`` returned are passed as the user's own."""
        self._require_launched("save")
        unwrapped = {k: unwrap(v) for k, v in state.items()} if isinstance(state, Mapping) else state
        try:
            self._strategy.save_checkpoint(path=path, state=unwrapped, filter=filter)
        finally:
            self._strategy.barrier()  # also after a failed write: the other ranks wait here

    def load(
        self,
        path: str | os.PathLike[str],
        state: dict[str, Any] | None = None,
        strict: bool = True,
        *,
        weights_only: bool | None = None,
    ) -> dict[str, Any]:
        """Restore ``state``'s objects from ``path`` in place; what the checkpoint holds beyond them is returned.

        The strategy reads it (``strategy.load_checkpoint(path=..., state=..., strict=..., weights_only=...)``, as in
        Lightning), so a strategy or ``CheckpointIO`` that reads from elsewhere sees the path as given. Plain
        entries it restores (``state["step"]``) are copied back into ``state``."""
        self._require_launched("load")
        unwrapped = {k: unwrap(v) for k, v in state.items()} if isinstance(state, dict) else state
        remainder = self._strategy.load_checkpoint(path=path, state=unwrapped, strict=strict, weights_only=weights_only)
        self._strategy.barrier()
        if isinstance(state, dict) and isinstance(unwrapped, dict):
            for key, value in unwrapped.items():
                if not _is_wrapper(state.get(key)):
                    state[key] = value
        return remainder

    def load_raw(
        self, path: str | os.PathLike[str], obj: Any, strict: bool = True, *, weights_only: bool | None = None
    ) -> None:
        """Load a plain ``torch.save(x.state_dict())`` file into a module or optimizer (through the strategy's
        ``load_checkpoint(path=..., state=obj, ...)``, as in Lightning)."""
        self._require_launched("load_raw")
        if not isinstance(unwrap(obj), (torch.nn.Module, torch.optim.Optimizer)):
            raise MisconfigurationException(
                f"fabric.load_raw(obj={obj!r}): expected a module or an optimizer to load the state into."
            )
        self._strategy.load_checkpoint(path=path, state=unwrap(obj), strict=strict, weights_only=weights_only)

    # ---- printing, logging, callbacks ----------------------------------------------------------------
    def print(self, *args: Any, **kwargs: Any) -> None:
        """``print`` on the first process of each machine only."""
        if self.local_rank == 0:
            print(*args, **kwargs)

    def log(self, name: str, value: Any, step: int | None = None) -> None:
        self.log_dict({name: value}, step=step)

    def log_dict(self, metrics: Mapping[str, Any], step: int | None = None) -> None:
        """Send ``metrics`` (tensors become Python numbers) to every logger."""
        scalars = convert_tensors_to_scalars(metrics)
        for logger in self._loggers:
            logger.log_metrics(metrics=scalars, step=step)

    def call(self, hook_name: str, *args: Any, **kwargs: Any) -> None:
        """Run ``hook_name`` on every callback that has it, with the keyword arguments its signature takes."""
        for callback in self._callbacks:
            method = getattr(callback, hook_name, None)
            if method is None:
                continue
            if not callable(method):
                warnings.warn(
                    f"Skipping the callback `{type(callback).__name__}.{hook_name}` because it is not callable.",
                    UserWarning,
                    stacklevel=2,
                )
                continue
            method(*args, **_accepted(method, kwargs))

    @staticmethod
    def seed_everything(seed: int | None = None, workers: bool | None = None, verbose: bool = True) -> int:
        """:func:`accelplug.seed.seed_everything`, with dataloader workers seeded by default (as in Fabric)."""
        return _seed_everything(seed, workers=True if workers is None else workers, verbose=verbose)


# ---- helpers -------------------------------------------------------------------------------------------
class _WrongObject(MisconfigurationException, TypeError):
    """A Fabric call given the wrong kind of object, or a subclass run from Lightning's CLI (Lightning: a
    ``TypeError``)."""


class _LaunchedByCli(MisconfigurationException, RuntimeError):
    """``launch()`` in a script Lightning's ``fabric run`` CLI started (Lightning raises a ``RuntimeError``)."""


class _NoLogger(MisconfigurationException, IndexError):
    """``fabric.logger`` without loggers (Lightning's ``IndexError`` from ``loggers[0]``)."""


class _JointSetupOnly(MisconfigurationException, RuntimeError):
    """``setup_optimizers`` under a strategy that prepares model and optimizers together (Lightning: a
    ``RuntimeError``)."""


def _check_separate_setup(strategy: object) -> None:
    """DeepSpeed and XLA build their engines from the model and its optimizers at once: Lightning Fabric refuses to
    set the optimizers up on their own there, and so does accelplug (the classes are the plugins', see
    :mod:`accelplug.backends`)."""
    from .. import backends

    joint = (backends.DeepSpeedStrategy, backends.XLAStrategy)
    if isinstance(strategy, joint):
        raise _JointSetupOnly(
            f"The `{strategy.__class__.__name__}` requires the model and optimizer(s) to be set up jointly through "
            "`.setup(model, optimizer, ...)`: fabric.setup_optimizers cannot prepare them on their own."
        )


def _is_wrapper(obj: object) -> bool:
    """Whether ``obj`` is one of the objects ``setup`` returned (restored through the object it wraps)."""
    return isinstance(unwrap_compiled(obj)[0], (FabricModule, FabricOptimizer, FabricDataLoader))


def _launched_by_lightning_cli() -> bool:
    """Whether Lightning's ``fabric run`` CLI started this script (it sets ``LT_CLI_USED=1``)."""
    return os.environ.get("LT_CLI_USED", "0").strip() not in ("", "0")


def _as_list(value: Any, what: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, (str, bytes, int, float)):
        raise MisconfigurationException(f"{what}={value!r}: expected an object or a list of objects.")
    return [value]


def _check_function(function: object) -> None:
    if not callable(function):
        raise _WrongObject(
            f"`Fabric.launch(...)` needs to be a callable, but got {function!r}: pass it uncalled, "
            "fabric.launch(train), not fabric.launch(train())."
        )
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return
    if not parameters:
        raise _WrongObject(
            f"`Fabric.launch(function={getattr(function, '__name__', function)})` needs to take at least one "
            "argument, the Fabric object the launcher passes in: def train(fabric): ..."
        )


def _takes(method: Callable[..., Any], name: str) -> bool:
    """Whether ``method`` takes the keyword ``name`` (or any keyword)."""
    try:
        parameters = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return True
    return name in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


def _accepted(method: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments ``method``'s signature takes (all of them when it takes ``**kwargs``)."""
    try:
        parameters = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return kwargs
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return kwargs
    return {k: v for k, v in kwargs.items() if k in parameters}
