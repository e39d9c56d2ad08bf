"""The ``Strategy`` base class: how a run is spread over the selected devices.

A strategy owns everything that differs between one process and many: bringing up the process
group, preparing the module (the one place where the preparation order lives), clipping gradients,
what goes into a checkpoint, giving each process its share of the data, averaging metrics across
processes, and deciding which process writes files. The Trainer's loops call these methods and stay
the same for every strategy.

The preparation order is two steps that the Trainer and Fabric both call::

    setup_module:     precision conversion (dtype) -> device -> strategy wrap (DDP / sharding) -> optional compile
    setup_optimizers: the strategy's adjustment of optimizers built on the prepared parameters

The Trainer runs them back to back with ``configure_optimizers()`` in between
(:meth:`Strategy.setup_module_and_optimizers`); Fabric runs ``setup_module`` when the user calls
``fabric.setup(...)``/``setup_module(...)`` and ``setup_optimizers`` on the optimizers the user built.
Optimizers come last because a sharding strategy replaces the parameters an optimizer would hold and
``torch.compile`` wraps the module; a strategy with other needs overrides ``setup_module`` (FSDP does).
"""

from __future__ import annotations

import contextlib
import os
from abc import ABC
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import torch

from ..errors import MisconfigurationException
from ..overrides import default_method

if TYPE_CHECKING:
    from ..accelerator import Accelerator
    from ..checkpoint import CheckpointIO
    from ..precision.base import NumericPrecision
    from .optimizers import OptimizerSetup
    from .prepared import PreparedModule, StepRouter, training_step_caller

# PreparedModule, StepRouter and training_step_caller live in .prepared; plugin strategies import them from here.
# They (and torch.compile's entry point, .compiling) are imported when a module is prepared, not with the base class
# that every Trainer's strategy is built on.
__all__ = ["PreparedModule", "StepRouter", "Strategy", "training_step_caller"]
_FROM_PREPARED = frozenset({"PreparedModule", "StepRouter", "training_step_caller"})


def __getattr__(name: str) -> Any:
    if name in _FROM_PREPARED:
        from . import prepared

        return getattr(prepared, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def accelerator_of(strategy: object, accelerator: Any, *, given: bool) -> Any:
    """The accelerator a run selects: Lightning's rule for a strategy built with ``accelerator=...`` (it chooses,
    when the Trainer's or Fabric's ``accelerator`` is not ``given`` or is ``"auto"``; both is refused)."""
    chosen = getattr(strategy, "_accelerator_given", None)
    if chosen is None:
        return accelerator
    if given and not (isinstance(accelerator, str) and accelerator.strip().lower() == "auto"):
        raise MisconfigurationException(
            f"accelerator set through both strategy class and accelerator flag, choose one: "
            f"{type(strategy).__name__}(accelerator={chosen!r}) and accelerator={accelerator!r}. Keep one of them."
        )
    return chosen


def devices_of(strategy: object, accelerator: Any, devices: Any) -> tuple[Any, Any]:
    """The accelerator and devices a run selects when ``strategy`` was built with ``parallel_devices`` (Lightning's
    rule: their device type is the accelerator, unless another was asked for, and they are the devices)."""
    parallel = getattr(strategy, "_parallel_devices", None)
    if not parallel:
        return accelerator, devices
    kind = parallel[0].type
    names = {"cpu": ("auto", "cpu"), "cuda": ("auto", "cuda", "gpu")}.get(kind, ("auto", kind))
    asked = accelerator.strip().lower() if isinstance(accelerator, str) else None
    if asked is not None and asked not in names:
        label = "GPU" if kind == "cuda" else kind.upper()
        raise MisconfigurationException(
            f"{label} parallel_devices set through {type(strategy).__name__} class, but accelerator set to "
            f"{accelerator}, please choose one device type (accelerator={kind!r} or leave it out)."
        )
    indices = [device.index for device in parallel]
    chosen_devices = indices if kind != "cpu" and None not in indices else len(parallel)
    return kind, chosen_devices


def plugin_of(strategy: object, attribute: str, from_plugins: Any) -> Any:
    """The precision plugin or cluster environment a run uses (``attribute`` ``"precision_plugin"`` or
    ``"cluster_environment"``): the one ``strategy`` was built with, else the one in ``plugins=``; both is refused,
    as Lightning refuses it."""
    given = getattr(strategy, "_precision_plugin_given" if attribute == "precision_plugin" else attribute, None)
    if given is None or not isinstance(strategy, Strategy):
        return from_plugins
    if from_plugins is not None:
        precision = attribute == "precision_plugin"
        raise MisconfigurationException(
            f"{'precision' if precision else attribute} set through both strategy class and plugins, choose one: "
            f"{type(strategy).__name__}({attribute}={given!r}) and plugins=[{from_plugins!r}]. Keep one of them."
        )
    return given


def one_precision(strategy: object, precision_plugin: Any, precision: Any) -> Any:
    """The precision a strategy is built with: ``precision_plugin`` (the Trainer's strategies' argument) or
    ``precision`` (Lightning Fabric's strategies' name for it); both at once is refused."""
    if precision is None:
        return precision_plugin
    if precision_plugin is not None and precision_plugin is not precision:
        raise MisconfigurationException(
            f"{type(strategy).__name__}(precision_plugin={precision_plugin!r}, precision={precision!r}) gives the "
            "precision twice: `precision` is Lightning Fabric's name for `precision_plugin`, pass one of them."
        )
    return precision


class Strategy(ABC):
    """A way to run training on the selected devices (registered through ``register_strategies``).

    The defaults describe one process on one device, so a subclass only overrides what it changes.
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""
    #: True when the strategy runs one process per device and needs a process group.
    is_distributed: ClassVar[bool] = False
    #: False when evaluation must run under ``no_grad`` instead of ``inference_mode`` (FSDP: parameters
    #: gathered under inference mode would become inference tensors that training cannot use later).
    allows_inference_mode: ClassVar[bool] = True

    @classmethod
    def supports(cls, accelerator: type[Accelerator]) -> bool | None:
        """Whether this strategy runs on ``accelerator``; None defers to its ``supported_strategies()``.

        A strategy from a plugin answers here, so built-in accelerators need not list names they have
        never heard of (and an accelerator can still refuse a strategy by answering for itself).
        """
        return None

    @classmethod
    def unsupported_reason(cls, accelerator: type[Accelerator]) -> str | None:
        """Why ``accelerator`` cannot run this strategy, in words, for the selection's error (None: generic)."""
        return None

    def __init__(
        self,
        accelerator: Accelerator | None = None,
        checkpoint_io: CheckpointIO | None = None,
        precision_plugin: NumericPrecision | None = None,
        *,
        precision: NumericPrecision | None = None,
    ) -> None:
        """Lightning's constructor. ``checkpoint_io`` is the writer every checkpoint goes through (the default,
        None, is :class:`~accelplug.checkpoint.TorchCheckpointIO`). ``accelerator`` (a name, an
        ``Accelerator`` class or instance) chooses the run's accelerator as Lightning's does, when the Trainer or
        Fabric is given none (:func:`accelerator_of`); ``precision_plugin`` is the precision the Trainer then runs
        with, as Lightning's connector takes it (giving one here and another in ``plugins=`` is refused);
        ``precision`` is Lightning Fabric's name for the same argument (one or the other)."""
        precision_plugin = one_precision(self, precision_plugin, precision)
        #: the accelerator this strategy was built with, which the Trainer or Fabric then selects
        self._accelerator_given: Any = accelerator
        #: the precision plugin this strategy was built with, which the Trainer then runs with
        self._precision_plugin_given: NumericPrecision | None = precision_plugin
        self._precision_plugin: NumericPrecision | None = None
        self.precision_plugin = precision_plugin  # through the setter: a strategy may refuse a plugin (FSDP)
        self.accelerator: Accelerator | None = None
        #: a subclass that set its device before calling this (Lightning's base sets none) keeps it
        self._root_device: torch.device | None = getattr(self, "_root_device", None)
        self._checkpoint_io: CheckpointIO | None = None
        if checkpoint_io is not None:
            self.checkpoint_io = checkpoint_io

    @property
    def precision_plugin(self) -> NumericPrecision | None:
        """The precision this strategy runs with (Lightning's ``strategy.precision_plugin``): the one it was built
        with, else the Trainer's or Fabric's once they chose one (None before)."""
        return getattr(self, "_precision_plugin", None)  # a plugin's subclass may skip Strategy.__init__

    @precision_plugin.setter
    def precision_plugin(self, precision: NumericPrecision | None) -> None:
        self._precision_plugin = precision

    @property
    def precision(self) -> NumericPrecision | None:
        """Lightning Fabric's name for :attr:`precision_plugin` (``fabric.strategy.precision``): one object."""
        return self.precision_plugin

    @precision.setter
    def precision(self, precision: NumericPrecision | None) -> None:
        self.precision_plugin = precision

    @property
    def root_device(self) -> torch.device | None:
        """The device this process runs on (Lightning's ``strategy.root_device``): the Trainer's from its
        construction on, None for a strategy no Trainer or Fabric holds yet."""
        return getattr(self, "_root_device", None)

    @root_device.setter
    def root_device(self, device: torch.device | None) -> None:
        self._root_device = device

    @property
    def checkpoint_io(self) -> CheckpointIO:
        """The writer of this strategy's checkpoints: the given one, else :class:`TorchCheckpointIO` (a wrapper
        given without an inner writer, ``AsyncCheckpointIO()``, gets that default inside it)."""
        from ..checkpoint import TorchCheckpointIO, _WrappingCheckpointIO  # with the first checkpoint, not the class

        current = getattr(self, "_checkpoint_io", None)  # a plugin's subclass may skip Strategy.__init__
        if current is None:
            current = self._checkpoint_io = TorchCheckpointIO()
        elif isinstance(current, _WrappingCheckpointIO) and not current._base_checkpoint_io_configured:
            current.checkpoint_io = TorchCheckpointIO()
        return current

    @checkpoint_io.setter
    def checkpoint_io(self, io: CheckpointIO) -> None:
        """Lightning assigns any object here; so does accelplug, provided it can be called as a writer (a stand-in
        such as a ``Mock`` included). A class, or an object without ``save_checkpoint``/``load_checkpoint``, is the
        mistake refused at once rather than at the first save."""
        from ..checkpoint import CheckpointIO

        if not isinstance(io, CheckpointIO) and not _duck_writer(io):
            shown = io.__name__ if isinstance(io, type) else repr(io)
            hint = (
                f" (pass an instance: {io.__name__}())"
                if isinstance(io, type) and issubclass(io, CheckpointIO)
                else " (subclass accelplug.plugins.CheckpointIO)"
            )
            raise MisconfigurationException(
                f"{type(self).__name__}.checkpoint_io = {shown}: expected a CheckpointIO instance such as "
                f"TorchCheckpointIO() or AsyncCheckpointIO(){hint}."
            )
        self._checkpoint_io = io

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def needs_launcher(self, processes: int) -> bool:
        """Whether a run of ``processes`` processes must be started by a launcher (torchrun).

        A distributed strategy that can make a process group of one in-process (FSDP on one device)
        answers False for one process, so ``python script.py`` runs it without re-launching.
        """
        return self.is_distributed

    # ---- the process -------------------------------------------------------------------------
    def setup_environment(self, accelerator: Accelerator | None = None, device: torch.device | None = None) -> None:
        """Prepare this process to run on ``device`` (once at the start of fit/validate/test/predict); called
        without arguments (Lightning's form), on the accelerator and device the Trainer already gave it."""
        accelerator, device = self._environment_target(accelerator, device)
        self.accelerator = accelerator
        self._root_device = device
        accelerator.setup_device(device)

    def _environment_target(
        self, accelerator: Accelerator | None, device: torch.device | None
    ) -> tuple[Accelerator, torch.device]:
        """``setup_environment``'s accelerator and device: the given ones, else those the Trainer gave it."""
        accelerator = accelerator if accelerator is not None else self.accelerator
        device = device if device is not None else self.root_device
        if accelerator is None or device is None:
            raise RuntimeError(
                f"{type(self).__name__}.setup_environment() needs the run's accelerator and device: call it with "
                "them, or on a strategy a Trainer holds (trainer.strategy)."
            )
        return accelerator, device

    def on_exception(self, exception: BaseException) -> None:  # noqa: B027 - optional hook
        """Lightning's hook: the Trainer's call was interrupted by ``exception`` (a strategy may release resources
        or tell other processes); called after the callbacks' ``on_exception``, before the teardown."""

    def teardown(self) -> None:
        """Release what the run acquired: the checkpoint writer's (which waits for a background save), then the
        accelerator's own teardown."""
        try:
            self.checkpoint_io.teardown()
        finally:
            if self.accelerator is not None:
                self.accelerator.teardown()

    @property
    def world_size(self) -> int:
        return 1

    @property
    def global_rank(self) -> int:
        return 0

    @property
    def local_rank(self) -> int:
        return 0

    @property
    def is_global_zero(self) -> bool:
        """Whether this process writes checkpoints, logs and the progress bar."""
        return self.global_rank == 0

    # ---- preparing the module ------------------------------------------------------------------
    def connect(self, model: torch.nn.Module) -> None:
        """Lightning's call: ``model`` is the module this strategy runs (the Trainer connects it at the start of
        each call; :attr:`lightning_module` reads it back)."""
        self._connected_module = model

    @property
    def lightning_module(self) -> torch.nn.Module | None:
        """The module given to :meth:`connect` (None before), unwrapped, as Lightning's strategy answers."""
        connected: torch.nn.Module | None = getattr(self, "_connected_module", None)
        return connected

    def attach_module(self, module: torch.nn.Module) -> None:  # noqa: B027 - optional hook
        """Called with the user's module before its ``setup`` and ``configure_model`` hooks: a strategy that builds
        something the module parallelises itself over hands it over here (the 2D strategy's device mesh)."""

    def setup_module(
        self,
        module: torch.nn.Module,
        precision: NumericPrecision,
        *,
        move_to_device: bool = True,
        compile_options: dict[str, Any] | None = None,
    ) -> PreparedModule:
        """The module's half of the preparation order: precision, device, wrap, compile (no optimizers).

        The Trainer reaches it through :meth:`setup_module_and_optimizers`, Fabric through
        ``fabric.setup(...)``; a strategy that prepares differently overrides this step (FSDP shards before
        anything moves to the device). ``move_to_device=False`` leaves placement to the user (Fabric's option).
        """
        from .prepared import PreparedModule, training_step_caller

        device = self._device()
        module = precision.convert_module(module)
        if move_to_device:
            module.to(device)
        wrapped = self.wrap_module(module)
        step_module: Callable[[Any, int], Any] = wrapped if wrapped is not None else training_step_caller(module)
        if compile_options is not None:
            from .compiling import compile_module

            step_module = compile_module(module, wrapped, compile_options, device)
        compiled = (module,) if compile_options is not None else ()
        router = _router_in(wrapped)
        return PreparedModule(module, step_module, wrapped, None, compiled_modules=compiled, router=router)

    def setup_module_and_optimizers(
        self,
        module: torch.nn.Module,
        precision: NumericPrecision,
        *,
        compile_options: dict[str, Any] | None = None,
        with_optimizers: bool = True,
    ) -> PreparedModule:
        """The Trainer's preparation: :meth:`setup_module`, ``configure_optimizers()``, :meth:`setup_optimizers`."""
        prepared = self.setup_module(module, precision, compile_options=compile_options)
        if with_optimizers:
            from .optimizers import parse_optimizers

            configure: Callable[[], Any] = prepared.module.configure_optimizers  # type: ignore[assignment]
            prepared.optim = self.setup_optimizers(parse_optimizers(configure(), prepared.module))
        self._prepared = prepared  # Lightning's strategy.model and strategy.optimizers read it
        self.__dict__.pop("_model_set", None)  # what a user assigned before gives way to the new preparation
        self.__dict__.pop("_optimizers_set", None)
        return prepared

    @property
    def model(self) -> torch.nn.Module | None:
        """Lightning's ``strategy.model``: the module as the run steps it (DDP's wrapper, FSDP's sharded module) once
        the Trainer prepared it, else the connected module; one assigned (``strategy.model = module``, Lightning's
        setter) until the next preparation."""
        assigned = self.__dict__.get("_model_set")
        if assigned is not None:
            return assigned  # type: ignore[no-any-return]
        prepared = getattr(self, "_prepared", None)
        if prepared is not None:
            return prepared.wrapped if prepared.wrapped is not None else prepared.module  # type: ignore[no-any-return]
        return self.lightning_module

    @model.setter
    def model(self, module: torch.nn.Module | None) -> None:
        self.__dict__["_model_set"] = module

    @property
    def optimizers(self) -> list[torch.optim.Optimizer]:
        """Lightning's ``strategy.optimizers``: what ``configure_optimizers()`` gave the run ([] before); a list
        assigned (``strategy.optimizers = [...]``, Lightning's setter) until the next preparation."""
        assigned = self.__dict__.get("_optimizers_set")
        if assigned is not None:
            return list(assigned)
        prepared = getattr(self, "_prepared", None)
        return list(prepared.optim.optimizers) if prepared is not None and prepared.optim is not None else []

    @optimizers.setter
    def optimizers(self, optimizers: list[torch.optim.Optimizer]) -> None:
        self.__dict__["_optimizers_set"] = list(optimizers)

    def lightning_module_state_dict(self) -> dict[str, Any]:
        """Lightning's name: the connected module's weights as this strategy saves them."""
        module = self.lightning_module
        return self.module_state_dict(module) if module is not None else {}

    def model_to_device(self) -> None:
        """Lightning's name: the connected module moved to this process's device."""
        if self.lightning_module is not None:
            self.lightning_module.to(self._device())

    def module_to_device(self, module: torch.nn.Module) -> None:
        """Lightning Fabric's name: ``module`` moved to this process's device (a sharding strategy places it when it
        shards, and leaves it here)."""
        module.to(self._device())

    def batch_to_device(self, batch: Any, device: torch.device | None = None, dataloader_idx: int = 0) -> Any:
        """Lightning's ``strategy.batch_to_device``: ``batch`` on ``device`` (default: this process's), through the
        connected module's batch-transfer hooks where it has them (a LightningModule's), else moved as the Trainer
        moves batches."""
        from ..data.batches import move_data_to_device

        target = device if device is not None else self._device()
        module = self.lightning_module
        hooks = [getattr(module, name, None) for name in ("on_before_batch_transfer", "transfer_batch_to_device")]
        after = getattr(module, "on_after_batch_transfer", None)
        if not (callable(hooks[0]) and callable(hooks[1]) and callable(after)):
            return move_data_to_device(batch, target)
        moved = hooks[1](hooks[0](batch, dataloader_idx), target, dataloader_idx)
        return after(moved, dataloader_idx)

    def register_forward_method(self, module: torch.nn.Module, name: str) -> None:  # noqa: B027 - optional hook
        """Make calls to ``module.<name>`` run with the strategy's forward machinery (Fabric's
        ``mark_forward_method``). A wrapper holding a :class:`StepRouter` needs nothing; FSDP registers it."""

    def wrap_module(self, module: torch.nn.Module) -> torch.nn.Module | None:
        """A module whose forward runs ``training_step`` with the strategy's machinery, or None for none."""
        return None

    def setup_optimizers(self, optim: OptimizerSetup) -> OptimizerSetup:
        """Adjust the optimizers ``configure_optimizers()`` returned (after the module was wrapped)."""
        return optim

    def _device(self) -> torch.device:
        if self.root_device is None:
            raise RuntimeError(f"strategy {self.name!r}: setup_environment() must run before the module is prepared")
        return self.root_device

    # ---- the optimizer step --------------------------------------------------------------------
    def clip_gradients(
        self,
        module: torch.nn.Module,
        optimizer: torch.optim.Optimizer,
        value: float,
        algorithm: str,
        *,
        norm_type: float = 2.0,
        error_if_nonfinite: bool = False,
    ) -> torch.Tensor | None:
        """Clip this optimizer's gradients (already unscaled) by norm or by value; the total norm for "norm".

        ``norm_type`` and ``error_if_nonfinite`` are ``torch.nn.utils.clip_grad_norm_``'s (Fabric passes them).
        """
        from ..precision.lightning.base import clipping_params

        params = clipping_params(self.precision_plugin, optimizer)
        if algorithm == "norm":
            return torch.nn.utils.clip_grad_norm_(
                params, value, norm_type=norm_type, error_if_nonfinite=error_if_nonfinite
            )
        torch.nn.utils.clip_grad_value_(params, value)
        return None

    def backward(self, loss: torch.Tensor, precision: Any = None, *args: Any, **kwargs: Any) -> None:
        """Run backward for the Trainer's ``loss`` through ``precision`` (which may scale it); ``args``/``kwargs``
        are ``manual_backward``'s extra arguments (``retain_graph=True``...), for ``loss.backward``.

        A strategy whose engine owns backward (one that scales, partitions or reduces gradients inside its own
        ``backward`` call) overrides this; a module's own ``backward`` hook still takes precedence over it.
        Called in Lightning Fabric's form, ``backward(tensor, module, *args, **kwargs)`` (a module or None in
        second place: a user's subclass calling ``super()``), it runs this strategy's precision plugin's
        ``pre_backward``, ``backward`` and ``post_backward``.
        """
        if precision is None or isinstance(precision, torch.nn.Module):
            from ..precision.lightning.base import fabric_backward

            fabric_backward(self.precision_plugin, loss, precision, *args, **kwargs)
            return
        precision.backward(loss, *args, **kwargs)

    def optimizer_step(
        self,
        optimizer: torch.optim.Optimizer,
        closure: Callable[[], Any] | None = None,
        precision: Any = None,
        **kwargs: Any,
    ) -> Any:
        """Step ``optimizer`` through ``precision`` (which may scale, or skip an overflowed step).

        Every optimizer step of every path goes through here: automatic optimisation (``closure`` runs
        ``training_step`` and backward), manual optimisation (``optimizer.step()`` in ``training_step``),
        and steps after a precision already ran the closure (``closure`` is None). A backend overrides it
        to reduce gradients across its replicas after the closure, or to mark the step of a lazy device
        afterwards. Overriding it sends every batch through the hook-complete path rather than the
        lean one, which calls ``optimizer.step()`` directly. Called without a precision, in Lightning Fabric's
        form ``optimizer_step(optimizer, **kwargs)`` (a user's subclass calling ``super()``), this strategy's
        precision steps it (a plugin's own ``optimizer_step`` where it wrote one).
        """
        if precision is None:
            from ..precision.lightning.base import fabric_optimizer_step

            if closure is not None:
                kwargs["closure"] = closure
            return fabric_optimizer_step(self.precision_plugin, optimizer, **kwargs)
        return precision.step(optimizer, closure)

    @property
    def customizes_optimizer_step(self) -> bool:
        """Whether this strategy overrides :meth:`optimizer_step` or :meth:`backward` (the loop then never
        bypasses them for its lean path, which calls ``loss.backward()`` and ``optimizer.step()`` directly)."""
        own = type(self)
        return own.optimizer_step is not Strategy.optimizer_step or own.backward is not Strategy.backward

    @default_method  # a distributed strategy that keeps it cannot skip the sync: Fabric warns as Lightning does
    @contextlib.contextmanager
    def no_gradient_sync(self, wrapped: torch.nn.Module | None) -> Iterator[None]:
        """Skip gradient synchronisation for micro-batches that only accumulate."""
        yield

    def pre_backward(self, loss: torch.Tensor) -> None:  # noqa: B027 - optional hook
        """Called before each ``manual_backward(loss)`` (Lightning's name): a wrapper that reduces gradients
        during backward gets ready for this one (DDP prepares its reducer)."""

    # ---- Lightning Fabric's calls: creating a model, clipping -----------------------------------
    def tensor_init_context(self, empty_init: bool | None = None) -> contextlib.AbstractContextManager[Any]:
        """Tensors created inside are on this process's device in the precision's dtype (``fabric.init_tensor``;
        Lightning's Trainer builds ``configure_model`` in it); ``empty_init=True`` skips ``torch.nn.init``."""
        from .init_contexts import tensor_init_context

        return tensor_init_context(self.root_device, self.precision_plugin, empty_init=empty_init)

    def model_sharded_context(self) -> contextlib.AbstractContextManager[Any]:
        """Lightning's context around ``configure_model`` for a strategy that shards layers as they are made;
        accelplug's sharding strategies shard in :meth:`setup_module` instead, so it is empty unless a plugin's
        strategy fills it."""
        return contextlib.nullcontext()

    def module_init_context(self, empty_init: bool | None = None) -> contextlib.AbstractContextManager[Any]:
        """A model built inside is made on this process's device in the precision's dtype (``fabric.init_module``);
        ``empty_init=True`` skips ``torch.nn.init`` (a sharding strategy builds on the meta device instead)."""
        from .init_contexts import module_init_context

        return module_init_context(
            self.root_device, self.precision_plugin, sharded=False, empty_init=empty_init, module_hook=True
        )

    def clip_gradients_norm(
        self,
        module: torch.nn.Module,
        optimizer: torch.optim.Optimizer,
        max_norm: float,
        norm_type: float = 2.0,
        error_if_nonfinite: bool = True,
    ) -> torch.Tensor:
        """``fabric.clip_gradients(max_norm=...)``: clip the (unscaled) gradients' total norm; returns it as it was."""
        nonfinite = error_if_nonfinite
        norm = self.clip_gradients(
            module, optimizer, float(max_norm), "norm", norm_type=float(norm_type), error_if_nonfinite=nonfinite
        )
        assert norm is not None  # clipping by norm always measures it
        return norm

    def clip_gradients_value(self, module: torch.nn.Module, optimizer: torch.optim.Optimizer, clip_val: float) -> None:
        """``fabric.clip_gradients(clip_val=...)``: clamp each (unscaled) gradient to ``[-clip_val, clip_val]``."""
        self.clip_gradients(module, optimizer, float(clip_val), "value")

    # ---- checkpoints ---------------------------------------------------------------------------
    def module_state_dict(self, module: torch.nn.Module) -> dict[str, Any]:
        """The module's full state for a checkpoint (a sharding strategy gathers it)."""
        return module.state_dict()

    def load_module_state_dict(self, module: torch.nn.Module, state: dict[str, Any], strict: bool = True) -> None:
        module.load_state_dict(state, strict=strict)

    def optimizer_state_dict(self, module: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
        return optimizer.state_dict()

    def load_optimizer_state_dict(
        self, module: torch.nn.Module, optimizer: torch.optim.Optimizer, state: dict[str, Any]
    ) -> None:
        """Restore an optimizer; also from a state keyed by parameter names (what FSDP saves in full)."""
        from .state_dicts import keyed_by_name, load_named_optimizer_state  # checkpoint code, loaded at a resume

        if keyed_by_name(state):
            load_named_optimizer_state(module, optimizer, state)
        else:
            optimizer.load_state_dict(state)

    @property
    def restore_checkpoint_after_setup(self) -> bool:
        """Whether the Trainer puts a checkpoint back only once this strategy prepared the module (Lightning's switch):
        a strategy that loads into the wrapped, sharded module answers True; otherwise the module, datamodule and
        callbacks are restored before ``configure_optimizers()``, as Lightning does."""
        return False

    @property
    def lightning_restore_optimizer(self) -> bool:
        """Whether the Trainer restores optimizers and schedulers from a checkpoint it resumes (Lightning's switch: a
        strategy whose engine restores them itself answers False)."""
        return True

    def checkpoint_map_location(self) -> torch.device:
        """Where a checkpoint's tensors are loaded to (a sharding strategy loads full tensors on the CPU)."""
        return self._device()

    def save_checkpoint(
        self,
        checkpoint: Any = None,
        path: Any = None,
        write: Callable[[dict[str, Any], Path], object] | None = None,
        *,
        tensor_keys: tuple[str, ...] = ("state_dict", "optimizer_states"),
        state: Mapping[str, Any] | None = None,
        filter: Mapping[str, Callable[[str, Any], bool]] | None = None,
        storage_options: Any = None,
    ) -> None:
        """Store ``checkpoint`` at ``path``. Every process calls this; by default one writes the file with
        ``write`` (the Trainer passes one calling :attr:`checkpoint_io`). A sharding strategy saves the entries named by
        ``tensor_keys`` (module and optimizer states: the Trainer's two keys, or the user's under Fabric)
        as shards first.

        Without ``write`` it is Lightning Fabric's call, ``save_checkpoint(path, state, storage_options=None,
        filter=None)`` (what ``fabric.save`` runs): modules and optimizers in ``state`` become their states, then
        the result comes back here with a writer (:mod:`.user_checkpoints`)."""
        if write is None:
            from .user_checkpoints import save

            if state is None:  # positional: save_checkpoint(path, state)
                path, state = checkpoint, path
            elif path is None:  # save_checkpoint(path, state=state)
                path = checkpoint
            by_name = type(self).optimizer_state_dict is not Strategy.optimizer_state_dict
            save(self, path, state, filter, storage_options, keys_by_name=by_name)
            return
        if self.writes_checkpoints:
            write(checkpoint, path)

    def load_checkpoint(
        self,
        path: str | os.PathLike[str],
        state: dict[str, Any] | torch.nn.Module | torch.optim.Optimizer | None = None,
        strict: bool = True,
        weights_only: bool | None = None,
    ) -> dict[str, Any]:
        """Lightning Fabric's call (what ``fabric.load`` and ``load_raw`` run): the objects of ``state`` restored in
        place from ``path`` through :attr:`checkpoint_io`, and the entries they did not take returned (the whole
        checkpoint without ``state``). ``state`` may be a module or an optimizer for a file holding its raw state
        (then ``{}`` is returned)."""
        from .user_checkpoints import load, load_raw

        if isinstance(state, (torch.nn.Module, torch.optim.Optimizer)):
            load_raw(self, path, state, strict, weights_only)
            return {}
        return load(self, path, state, strict, weights_only)

    def load_sharded_checkpoint(
        self, module: torch.nn.Module, optimizers: list[torch.optim.Optimizer], folder: Path
    ) -> None:
        """Load tensors saved with ``torch.distributed.checkpoint`` in ``folder`` into ``module`` and ``optimizers``.

        torch's loader reshards to this run's layout, so one process loads what several saved.
        """
        from .state_dicts import load_sharded

        load_sharded(module, optimizers, folder)

    def remove_checkpoint(self, path: str | os.PathLike[str]) -> None:
        """Delete a checkpoint this strategy saved: the file through :attr:`checkpoint_io` (Lightning's call),
        then any shard folder beside it."""
        if self.is_global_zero:
            self.checkpoint_io.remove_checkpoint(path)
            from ..checkpoint.file import is_url

            if not is_url(path):
                from .state_dicts import remove_shard_folders

                remove_shard_folders(Path(os.fspath(path)))

    @property
    def writes_checkpoints(self) -> bool:
        """Whether this process writes the checkpoint file (one writer unless the strategy shards)."""
        return self.is_global_zero

    # ---- data ----------------------------------------------------------------------------------
    def prepare_dataloader(
        self, loader: Any, *, shuffle_seed: int, shuffle: bool | None = None, unrepeated: bool = False
    ) -> Any:
        """This process's view of ``loader`` (DDP gives each rank its own shard; ``shuffle`` None: shuffle the
        shards when the loader shuffles). ``unrepeated=True`` (passed for prediction only, so an override without
        it still serves the other stages): each sample to exactly one process, without padding the shares."""
        return loader

    def process_dataloader(self, loader: Any) -> Any:
        """The loader the loops iterate, for every loader of every stage (after any sharding).

        A backend that feeds its device in its own way (a background transfer thread, a loader that
        marks the step of a lazy device at each batch) wraps ``loader`` here. What it returns must be
        re-iterable once per epoch and keep ``len()`` when ``loader`` has one; batches it yields that
        are already on the device are left where they are.
        """
        return loader

    def set_epoch(self, loader: Any, epoch: int) -> None:
        """Tell a per-epoch shuffling sampler which epoch starts (keeps ranks and resumes in step): the loader's
        ``sampler`` and its ``batch_sampler``'s, each once, as Lightning does."""
        samplers = [getattr(loader, "sampler", None), getattr(getattr(loader, "batch_sampler", None), "sampler", None)]
        if samplers[1] is samplers[0]:
            samplers.pop()
        for sampler in samplers:
            if sampler is not None and callable(getattr(sampler, "set_epoch", None)):
                sampler.set_epoch(epoch)

    # ---- collectives ---------------------------------------------------------------------------
    def reduce_mean(self, values: torch.Tensor) -> torch.Tensor:
        """``values`` averaged over every process (the identity for one process)."""
        return values

    def reduce_sum(self, values: torch.Tensor) -> torch.Tensor:
        """``values`` summed over every process (the identity for one process)."""
        return values

    def reduce_any(self, flag: bool) -> bool:
        """True on every process when ``flag`` is True on any (the stop decision all ranks must share)."""
        return flag

    def all_gather(self, tensor: torch.Tensor, group: Any | None = None, sync_grads: bool = False) -> torch.Tensor:
        """``tensor`` from every process, stacked on a new first dimension (unchanged without a process group)."""
        from ..distributed.collectives import gather_tensor

        return gather_tensor(tensor, group, sync_grads)

    def broadcast_object(self, obj: Any) -> Any:
        """Rank 0's ``obj`` on every process (so all ranks agree on, e.g., the log folder)."""
        return obj

    def broadcast(self, obj: Any, src: int = 0) -> Any:
        """Lightning's ``strategy.broadcast``: process ``src``'s (picklable) ``obj`` on every process."""
        if src == 0:
            return self.broadcast_object(obj)
        from ..distributed.collectives import broadcast

        return broadcast(obj, src)

    def reduce(self, tensor: Any, group: Any | None = None, reduce_op: Any = "mean") -> Any:
        """Lightning's ``strategy.reduce``: a tensor reduced over the processes, in place (``"mean"``/``"avg"``,
        ``"sum"``, ``"max"``, ``"min"``, ``"product"`` or a ``torch.distributed.ReduceOp``); anything that is not a
        tensor, and every tensor of a run of one process, as given."""
        from ..distributed.collectives import all_reduce

        return all_reduce(tensor, group, reduce_op) if isinstance(tensor, torch.Tensor) else tensor

    def all_reduce(self, tensor: Any, group: Any | None = None, reduce_op: Any = "mean") -> Any:
        """Lightning Fabric's name for :meth:`reduce` (``fabric.all_reduce`` runs it)."""
        return self.reduce(tensor, group, reduce_op)

    def reduce_boolean_decision(self, decision: bool, all: bool = True) -> bool:
        """Lightning's name: the decision every process shares (one process: its own)."""
        return decision

    def barrier(self) -> None:  # noqa: B027 - optional hook
        """Wait until every process reaches this point."""

    def watch_for_hangs(self, progress: Callable[[], int]) -> contextlib.AbstractContextManager[Any]:
        """A context within which a rank that makes the others wait too long is named (one process: none)."""
        return contextlib.nullcontext()


def loads_optimizers_from_checkpoint(strategy: Strategy) -> bool:
    """Whether ``strategy``'s ``load_optimizer_state_dict`` is Lightning's form, ``(checkpoint)``, restoring every
    optimizer from the whole checkpoint, rather than accelplug's ``(module, optimizer, state)``: a subclass written
    for Lightning overrides it so."""
    method = type(strategy).load_optimizer_state_dict
    if method is Strategy.load_optimizer_state_dict:
        return False
    import inspect

    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    positional = [p for p in inspect.signature(method).parameters.values() if p.kind in kinds]
    return len(positional) == 2  # self, checkpoint


def _duck_writer(io: object) -> bool:
    """An instance (not a class) with callable ``save_checkpoint`` and ``load_checkpoint``: a writer by its methods."""
    return not isinstance(io, type) and all(
        callable(getattr(io, name, None)) for name in ("save_checkpoint", "load_checkpoint")
    )


def _router_in(wrapped: torch.nn.Module | None) -> StepRouter | None:
    """The :class:`StepRouter` a strategy's wrapper holds (DDP: ``DDP(StepRouter(module))``), if any."""
    if wrapped is None:
        return None
    from .prepared import StepRouter

    return next((m for m in wrapped.modules() if isinstance(m, StepRouter)), None)
