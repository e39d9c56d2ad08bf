"""Fully sharded data parallel on torch's FSDP2 (``torch.distributed.fsdp.fully_shard``).

Each process holds a shard of every parameter, gradient and optimizer state; a block's full
parameters are all-gathered just before it runs and freed after, so a model larger than one device's
memory trains over several. Everything is torch's own machinery: ``fully_shard`` (parameters become
``DTensor`` shards, in place: the user's module object and its ``state_dict`` keys stay the same),
``MixedPrecisionPolicy`` from the run's precision, ``CPUOffloadPolicy``, activation checkpointing with
``torch.distributed._composable.checkpoint``, and checkpoints through
``torch.distributed.checkpoint`` (a full state dict gathered on rank 0, or shards saved by every
process and resharded on load).

Options, with Lightning's names (``Trainer(strategy=FSDPStrategy(...))``; ``strategy="fsdp"`` takes
the defaults):

- ``auto_wrap_policy``: which submodules become their own shard unit (all-gathered and freed as one):
  a set of module classes (``{TransformerBlock}``) or a callable ``(module) -> bool``. The default
  shards every element of an ``nn.ModuleList`` (where transformer blocks usually live), then the rest
  of the model as the root unit.
- ``activation_checkpointing_policy``: module classes (or a callable) whose activations are
  recomputed in backward instead of kept.
- ``cpu_offload``: keep parameter shards, gradients and optimizer state in CPU memory (the optimizer
  steps on the CPU); only on an accelerator.
- ``sharding_strategy``: ``"FULL_SHARD"`` (free parameters after forward, ZeRO-3) or
  ``"SHARD_GRAD_OP"`` (keep them until backward, ZeRO-2-like, less communication).
- ``state_dict_type``: ``"full"`` (one file, loads anywhere, also without FSDP) or ``"sharded"``
  (every process saves its shard with DCP; resumes on any number of processes).

With ``Trainer(compile=...)`` each shard unit's forward is compiled (per block, as torch recommends for
FSDP2: FSDP's all-gather and reduce-scatter hooks run around the compiled frames, not inside them);
without shard units the root module's forward is. On one device the strategy makes a process group of one in
this process, so ``python script.py`` runs it without a launcher.
"""

from __future__ import annotations

import contextlib
import inspect
import os
from collections.abc import Callable, Iterable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, ForwardRef, Literal, Union

import torch
from torch.distributed.constants import default_pg_timeout

from ..errors import MisconfigurationException, did_you_mean
from .compiling import compile_in_place
from .ddp import DDPStrategy
from .prepared import PreparedModule, training_step_caller

if TYPE_CHECKING:
    from ..accelerator import Accelerator
    from ..precision.base import NumericPrecision

__all__ = ["FSDPStrategy", "FabricFSDPStrategy"]

ModulePolicy = Callable[[torch.nn.Module], bool]
_SHARDING = {"FULL_SHARD": True, "SHARD_GRAD_OP": False}
#: Hybrid sharding (HSDP): shards within a group of processes, replicas across groups (a 2-D device mesh).
_HYBRID = {"HYBRID_SHARD": True, "_HYBRID_SHARD_ZERO2": False}
#: torch FSDP1 options Lightning passes through ``**kwargs``, and what FSDP2 (``fully_shard``) does instead.
_FSDP1_ONLY = {
    "use_orig_params": "FSDP2 always keeps the original parameters (use_orig_params=True is accepted)",
    "limit_all_gathers": "FSDP2 bounds its all-gathers itself",
    "forward_prefetch": "FSDP2 prefetches implicitly; call module.set_modules_to_forward_prefetch(...) for more",
    "backward_prefetch": "FSDP2 prefetches implicitly; call module.set_modules_to_backward_prefetch(...) for more",
    "sync_module_states": "the strategy starts every process from rank 0's parameters by sharding them",
    "param_init_fn": "create the model under trainer.init_module(empty_init=True); reset_parameters() initialises it",
    "ignored_modules": "leave such modules out of auto_wrap_policy; FSDP2 has no ignored modules",
    "device_id": "the strategy places each process on the device the Trainer selected",
    "forward_prefetch_limit": "FSDP2 prefetches implicitly",
}
_STATE_DICT_TYPES = ("full", "sharded")
_STEP_METHODS = ("training_step", "validation_step", "test_step", "predict_step")
_POLICY_FORMS = (
    "None (the default), a set of nn.Module subclasses such as {TransformerBlock}, or a callable (module) -> bool"
)


def _policy(value: object, option: str) -> ModulePolicy | None:
    """A ``module -> bool`` test from a set of module classes or a callable; bad input named."""
    if value is None:
        return None
    if isinstance(value, type) and issubclass(value, torch.nn.Module):
        value = {value}
    if isinstance(value, (set, frozenset, list, tuple)):
        classes = tuple(value)
        bad = [c for c in classes if not (isinstance(c, type) and issubclass(c, torch.nn.Module))]
        if bad or not classes:
            shown = bad[0] if bad else value
            raise MisconfigurationException(
                f"FSDPStrategy({option}={value!r}): {shown!r} is not an nn.Module subclass. Accepted: {_POLICY_FORMS}."
            )
        return lambda module: isinstance(module, classes)
    if callable(value):
        return value  # type: ignore[no-any-return]
    raise MisconfigurationException(f"FSDPStrategy({option}={value!r}) is invalid. Accepted: {_POLICY_FORMS}.")


def _module_list_elements(root: torch.nn.Module) -> ModulePolicy:
    """The default policy: every element of an ``nn.ModuleList`` (the usual home of transformer blocks)."""
    elements = {id(m) for list_ in root.modules() if isinstance(list_, torch.nn.ModuleList) for m in list_}
    return lambda module: id(module) in elements


def warn_activation_checkpointing_deprecated(value: Any, *, stacklevel: int) -> None:
    """Lightning's deprecation of ``activation_checkpointing`` (the same modules are checkpointed), with its key
    phrase; a ``DeprecationWarning`` pointing ``stacklevel`` frames up, at the user's line."""
    import warnings

    classes = value if isinstance(value, (list, tuple, set)) else [value]
    warnings.warn(
        f"`FSDPStrategy(activation_checkpointing={value})` is deprecated, use "
        f"`FSDPStrategy(activation_checkpointing_policy={set(classes)})` instead (it checkpoints the same modules).",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


#: FSDP1 options whose value asks for what FSDP2 always does: accepted (as Lightning accepts them) and dropped.
_FSDP2_ALWAYS = {"use_orig_params": True, "limit_all_gathers": True}


def _check_fsdp1_options(options: dict[str, Any]) -> None:
    """``**kwargs`` meant for torch's FSDP1: ``use_orig_params=True`` and ``limit_all_gathers=True`` are what FSDP2
    does; the rest are named."""
    for name, value in _FSDP2_ALWAYS.items():
        if options.get(name, value) is value:
            options.pop(name, None)
    for name in options:
        if name in _FSDP1_ONLY:
            raise MisconfigurationException(
                f"FSDPStrategy({name}=...) is an option of torch's FSDP1 (FullyShardedDataParallel); accelplug "
                f"shards with FSDP2 (fully_shard), which has no such option: {_FSDP1_ONLY[name]}."
            )
        accepted = [n for n in inspect.signature(FSDPStrategy.__init__).parameters if n not in ("self", "kwargs")]
        raise MisconfigurationException(
            f"FSDPStrategy({name}=...) is not an option of accelplug's FSDP strategy (torch FSDP2). Accepted: "
            f"{', '.join(accepted)}.{did_you_mean(name, accepted)}"
        )


def _offload(value: object) -> tuple[bool, Any]:
    """``cpu_offload`` as Lightning takes it (a bool, None, FSDP1's ``CPUOffload`` or FSDP2's ``CPUOffloadPolicy``):
    whether parameters are offloaded, and the value to report as ``strategy.cpu_offload`` (Lightning reports a bool
    as ``CPUOffload(offload_params=...)``)."""
    from torch.distributed.fsdp import CPUOffload, CPUOffloadPolicy

    if value is None or isinstance(value, bool):
        return bool(value), CPUOffload(offload_params=bool(value))
    if isinstance(value, CPUOffload):
        return bool(value.offload_params), value
    if isinstance(value, CPUOffloadPolicy):
        return True, value
    raise MisconfigurationException(
        f"FSDPStrategy(cpu_offload={value!r}) is invalid: expected True or False (or torch's CPUOffload / "
        "CPUOffloadPolicy)."
    )


def _mixed_precision_policy(value: object) -> Any:
    """FSDP2's ``MixedPrecisionPolicy`` from Lightning's ``mixed_precision`` (FSDP1's ``MixedPrecision`` or FSDP2's)."""
    if value is None:
        return None
    from torch.distributed.fsdp import MixedPrecision, MixedPrecisionPolicy

    if isinstance(value, MixedPrecisionPolicy):
        return value
    if not isinstance(value, MixedPrecision):
        raise MisconfigurationException(
            f"FSDPStrategy(mixed_precision={value!r}) is invalid: expected torch's MixedPrecisionPolicy (FSDP2) or "
            "MixedPrecision (FSDP1), or None to follow Trainer(precision=...)."
        )
    if value.buffer_dtype is not None or value.keep_low_precision_grads:
        raise MisconfigurationException(
            "FSDPStrategy(mixed_precision=MixedPrecision(...)): buffer_dtype and keep_low_precision_grads are FSDP1's; "
            "FSDP2 keeps buffers in the module's dtype and reduces gradients in reduce_dtype. Leave them unset "
            "(or pass torch.distributed.fsdp.MixedPrecisionPolicy)."
        )
    return MixedPrecisionPolicy(
        param_dtype=value.param_dtype,
        reduce_dtype=value.reduce_dtype,
        cast_forward_inputs=value.cast_forward_inputs or value.cast_root_forward_inputs,
    )


def _check_mesh(value: object) -> Any:
    """``device_mesh``: (replicas, shards) for hybrid sharding, or torch's ``DeviceMesh``."""
    if value is None:
        return None
    from torch.distributed.device_mesh import DeviceMesh

    if isinstance(value, DeviceMesh):
        return value
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in value)
    ):
        return value
    raise MisconfigurationException(
        f"FSDPStrategy(device_mesh={value!r}) is invalid: expected (replicas, shards), two positive ints whose product "
        "is the number of processes, or a torch DeviceMesh."
    )


def _choice(value: object, accepted: Iterable[str], option: str, *, upper: bool) -> str:
    text = getattr(value, "name", value)  # torch's ShardingStrategy enum members work as their names
    if not isinstance(text, str):
        raise MisconfigurationException(f"FSDPStrategy({option}={value!r}) is invalid. Accepted: {list(accepted)}.")
    key = text.strip().upper() if upper else text.strip().lower()
    if key not in accepted:
        hint = did_you_mean(key, list(accepted))
        raise MisconfigurationException(
            f"FSDPStrategy({option}={value!r}) is invalid. Accepted: {list(accepted)}.{hint}"
        )
    return key


class _HybridWithoutLayout(MisconfigurationException, RuntimeError):
    """Hybrid sharding with nothing that lays it out (Lightning raises a ``RuntimeError``)."""


class _NotFSDPPrecision(MisconfigurationException, TypeError):
    """Lightning raises a ``TypeError`` here; it is also accelplug's configuration error."""


class FSDPStrategy(DDPStrategy):
    name = "fsdp"
    description = "parameters, gradients and optimizer state sharded over processes (torch FSDP2)"
    is_distributed = True
    allows_inference_mode = False  # FSDP's all-gather buffers must stay usable by autograd (as in Lightning)

    def __init__(
        self,
        accelerator: Any = None,
        parallel_devices: list[torch.device] | None = None,
        cluster_environment: Any = None,
        checkpoint_io: Any = None,
        precision_plugin: Any = None,
        process_group_backend: str | None = None,
        timeout: timedelta | None = default_pg_timeout,
        cpu_offload: Any = None,
        mixed_precision: Any = None,
        auto_wrap_policy: Any = None,
        activation_checkpointing: Any = None,
        activation_checkpointing_policy: Any = None,
        sharding_strategy: Any = "FULL_SHARD",
        state_dict_type: Literal["full", "sharded"] | str = "full",
        device_mesh: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            accelerator=accelerator,
            parallel_devices=parallel_devices,
            cluster_environment=cluster_environment,
            checkpoint_io=checkpoint_io,
            precision_plugin=precision_plugin,
            process_group_backend=process_group_backend,
            timeout=timeout,
            precision=kwargs.pop("precision", None),  # Lightning Fabric's name of precision_plugin
        )
        _check_fsdp1_options(kwargs)
        if activation_checkpointing is not None:
            if activation_checkpointing_policy is not None:
                raise MisconfigurationException(
                    "FSDPStrategy got both activation_checkpointing and activation_checkpointing_policy; pass only "
                    "activation_checkpointing_policy (Lightning's newer name for the same thing)."
                )
            warn_activation_checkpointing_deprecated(activation_checkpointing, stacklevel=3)
            activation_checkpointing_policy = activation_checkpointing
        self.auto_wrap_policy = _policy(auto_wrap_policy, "auto_wrap_policy")
        self.activation_checkpointing_policy = _policy(
            activation_checkpointing_policy, "activation_checkpointing_policy"
        )
        self._offload_params, self.cpu_offload = _offload(cpu_offload)
        self._mixed_precision_given = mixed_precision
        self.mixed_precision = _mixed_precision_policy(mixed_precision)
        sharding = _choice(sharding_strategy, (*_SHARDING, *_HYBRID, "NO_SHARD"), "sharding_strategy", upper=True)
        if sharding == "NO_SHARD":
            raise MisconfigurationException(
                "FSDPStrategy(sharding_strategy='NO_SHARD') keeps every parameter whole on every process, which is "
                "data parallelism: use strategy='ddp' (torch FSDP2, which accelplug uses, always shards)."
            )
        if sharding in _HYBRID and auto_wrap_policy is None and device_mesh is None:
            raise _HybridWithoutLayout(
                "The hybrid sharding strategy requires you to pass at least one of the parameters: `auto_wrap_policy`, "
                "`process_group` tuple, or `device_mesh`: give device_mesh=(replicas, shards), or auto_wrap_policy "
                "(then each node's processes shard and the nodes replicate)."
            )
        self._sharding = sharding
        self.device_mesh = _check_mesh(device_mesh)
        self._extra_kwargs = {"use_orig_params": True, **kwargs}
        self.state_dict_type = _choice(state_dict_type, _STATE_DICT_TYPES, "state_dict_type", upper=False)
        self._options = {
            "auto_wrap_policy": auto_wrap_policy,
            "activation_checkpointing_policy": activation_checkpointing_policy,
            "cpu_offload": self._offload_params,
            "mixed_precision": mixed_precision,
            "sharding_strategy": self._sharding,
            "state_dict_type": self.state_dict_type,
            "device_mesh": device_mesh,
        }
        #: Submodules made shard units in the last preparation (the root module not counted).
        self.shard_units: list[torch.nn.Module] = []

    @property
    def sharding_strategy(self) -> Any:
        """torch's ``ShardingStrategy`` member, as Lightning reports it (given as a name or a member)."""
        from torch.distributed.fsdp import ShardingStrategy

        return ShardingStrategy[self._sharding]

    @property
    def mixed_precision_config(self) -> Any:
        """The ``mixed_precision`` given to the strategy, else the one its ``FSDPPrecision`` plugin derives from the
        precision (None for full precision), as in Lightning."""
        if self._mixed_precision_given is not None:
            return self._mixed_precision_given
        return getattr(self.precision_plugin, "mixed_precision_config", None)

    @property
    def kwargs(self) -> dict[str, Any]:
        """The extra options FSDP1 would receive, as Lightning reports them: ``use_orig_params`` (always True: FSDP2
        keeps the original parameters) and ``device_mesh`` when given."""
        given = dict(self._extra_kwargs)
        if self._options["device_mesh"] is not None:
            given["device_mesh"] = self._options["device_mesh"]
        return given

    @property
    def precision_plugin(self) -> NumericPrecision | None:
        """The precision this strategy runs with; of Lightning's plugin classes only ``FSDPPrecision``, as in
        Lightning (a precision name given to the Trainer is the Trainer's to choose)."""
        return getattr(self, "_precision_plugin", None)

    @precision_plugin.setter
    def precision_plugin(self, precision: NumericPrecision | None) -> None:
        from ..precision.lightning import FSDPPrecision
        from ..precision.lightning.base import is_plugin

        if precision is not None and is_plugin(precision) and not is_plugin(precision, FSDPPrecision):
            raise _NotFSDPPrecision(
                f"The FSDP strategy can only work with the `FSDPPrecision` plugin, found {precision}: pass "
                f"FSDPPrecision({precision.precision!r}) or Trainer(precision={precision.precision!r})."
            )
        self._precision_plugin = precision

    def __repr__(self) -> str:
        given = ", ".join(f"{k}={v!r}" for k, v in self._options.items() if v is not None and v is not False)
        return f"FSDPStrategy({given})"

    # ---- where it runs ---------------------------------------------------------------------------
    @classmethod
    def supports(cls, accelerator: type[Accelerator]) -> bool | None:
        if accelerator.device_type in ("cuda", "cpu"):
            return True  # nccl / gloo; FSDP2 runs on both (the CPU through gloo)
        if accelerator.distributed_backend is None:
            return False
        return None  # a plugin accelerator with a backend opts in by listing "fsdp"

    @classmethod
    def unsupported_reason(cls, accelerator: type[Accelerator]) -> str | None:
        if accelerator.distributed_backend is None:
            single = (
                " (the Apple GPU is one device, so there is nothing to shard over)" if accelerator.name == "mps" else ""
            )
            return (
                "FSDP shards parameters across processes and gathers them with torch.distributed collectives, "
                f"and no torch.distributed backend can move {accelerator.device_type} tensors "
                f"(gloo and nccl do not support the {accelerator.device_type} device); "
                f"use strategy='single_device'{single}"
            )
        return None

    def backend_for(self, accelerator: Accelerator, device: torch.device) -> str:
        backend = super().backend_for(accelerator, device)
        if self._offload_params and device.type != "cpu":
            # Offloaded shards and gradients live on the CPU; gradient clipping reduces their norms there.
            return f"{device.type}:{backend},cpu:gloo"
        return backend

    def setup_environment(self, accelerator: Accelerator | None = None, device: torch.device | None = None) -> None:
        accelerator, device = self._environment_target(accelerator, device)
        if self._offload_params and device.type == "cpu":
            raise MisconfigurationException(
                "FSDPStrategy(cpu_offload=True) moves parameter shards to CPU memory between uses of an accelerator, "
                "but this run is on the CPU already; drop cpu_offload or train on a GPU."
            )
        super().setup_environment(accelerator, device)  # a launcher's group, or one of one process here

    # ---- preparing the module --------------------------------------------------------------------
    def module_to_device(self, module: torch.nn.Module) -> None:
        """Lightning Fabric's call: nothing here, as in Lightning; sharding places the module (:meth:`setup_module`)."""

    def setup_module(
        self,
        module: torch.nn.Module,
        precision: NumericPrecision,
        *,
        move_to_device: bool = True,
        compile_options: dict[str, Any] | None = None,
    ) -> PreparedModule:
        """NumericPrecision, then sharding (which moves each unit to the device: the whole model never has to
        fit on one; ``move_to_device`` changes nothing), then compile inside it. Parameters created on the
        meta device (Fabric's ``init_module(empty_init=True)``) are materialised on the device after
        sharding, shard by shard, and initialised by their modules' ``reset_parameters()``."""
        from torch.distributed.fsdp import FSDPModule

        module = precision.convert_module(module)
        if compile_options is not None:
            from .compiling import check_compile_device

            check_compile_device(self._device(), compile_options)
        units: list[torch.nn.Module] | None = getattr(module, "_accelplug_shard_units", None)
        if units is None:  # not sharded by an earlier fit/validate of this module
            units = (
                [] if isinstance(module, FSDPModule) else self._shard(module, precision, compile_options is not None)
            )
            object.__setattr__(module, "_accelplug_shard_units", units)  # a user's own fully_shard: kept as is
        self.shard_units = units
        _materialize_meta(module, self._device())
        compiled = tuple(units) or (module,)
        if compile_options is not None and not getattr(module, "_accelplug_compiled", False):
            for target in compiled:  # FSDP's hooks run around forward, outside the compiled frames
                compile_in_place(target, compile_options)
            object.__setattr__(module, "_accelplug_compiled", True)
        self._register_step_methods(module)
        self._use_sharded_scaler(precision)
        step = training_step_caller(module)
        return PreparedModule(module, step, module, None, compiled_modules=compiled if compile_options else ())

    def register_forward_method(self, module: torch.nn.Module, name: str) -> None:
        """The root's parameters are gathered for ``module.<name>()`` too, not only for ``forward``."""
        from torch.distributed.fsdp import register_fsdp_forward_method

        register_fsdp_forward_method(module, name)

    def _shard(
        self, module: torch.nn.Module, precision: NumericPrecision, compiling: bool = False
    ) -> list[torch.nn.Module]:
        """``fully_shard`` the shard units (innermost first), then the root; the units, root not included."""
        import torch.distributed as dist
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import (
            CPUOffloadPolicy,
            FSDPModule,
            MixedPrecisionPolicy,
            OffloadPolicy,
            fully_shard,
        )

        device = self._device()
        mesh = self._mesh(device, init_device_mesh, dist.get_world_size())
        options: dict[str, Any] = {
            "mesh": mesh,
            "reshard_after_forward": {**_SHARDING, **_HYBRID}[self._sharding],
            "mp_policy": self.mixed_precision or precision.fsdp_mixed_precision() or MixedPrecisionPolicy(),
            "offload_policy": CPUOffloadPolicy() if self._offload_params else OffloadPolicy(),
        }
        wrap = self.auto_wrap_policy or _module_list_elements(module)
        units = [m for m in module.modules() if m is not module and wrap(m)]
        if self.activation_checkpointing_policy is not None:
            for sub in module.modules():
                if sub is not module and self.activation_checkpointing_policy(sub):
                    self._checkpoint_activations(sub, compiling)
        for unit in reversed(units):  # innermost first, as fully_shard requires
            if not isinstance(unit, FSDPModule):
                fully_shard(unit, **options)
        # The root's parameters stay gathered from forward to backward, which starts with them (torch's default for
        # the root: resharding it costs one more all-gather per step and saves nothing, backward needs them at once).
        fully_shard(module, **{**options, "reshard_after_forward": False})
        return units

    @staticmethod
    def _checkpoint_activations(module: torch.nn.Module, compiling: bool) -> None:
        """Recompute ``module``'s activations in backward instead of keeping them.

        Eager: torch's composable ``checkpoint`` (hooks around the forward). Compiled: the forward itself
        is replaced by ``torch.utils.checkpoint`` of the original forward, so the checkpoint lies inside the
        frame ``compile`` traces (as ``checkpoint_wrapper`` under ``torch.compile`` gives torchtitan) and
        inductor plans the recomputation; the module object and its ``state_dict`` keys stay the same.
        """
        if not compiling:
            from torch.distributed._composable.checkpoint_activation import checkpoint

            checkpoint(module)
            return
        import functools

        from torch.utils.checkpoint import checkpoint as recompute

        forward = module.forward

        @functools.wraps(forward)
        def recomputed(*args: Any, **kwargs: Any) -> Any:
            return recompute(forward, *args, use_reentrant=False, **kwargs)

        module.forward = recomputed  # type: ignore[method-assign]

    def _mesh(self, device: torch.device, init_device_mesh: Callable[..., Any], world_size: int) -> Any:
        """The processes' layout: one dimension to shard over, or (replicate, shard) for hybrid sharding (HSDP)."""
        chosen = self.device_mesh
        if chosen is None and self._sharding in _HYBRID:
            per_node = int(os.environ.get("LOCAL_WORLD_SIZE", str(world_size)))
            chosen = (max(1, world_size // per_node), per_node)
        if chosen is None:
            return init_device_mesh(device.type, (world_size,))
        if not isinstance(chosen, tuple):
            return chosen  # the user's DeviceMesh
        if chosen[0] * chosen[1] != world_size:
            raise MisconfigurationException(
                f"FSDPStrategy(device_mesh={chosen}) lays out {chosen[0] * chosen[1]} processes, but this run has "
                f"{world_size}; give (replicas, shards) whose product is the number of processes."
            )
        return init_device_mesh(device.type, chosen, mesh_dim_names=("replicate", "shard"))

    @staticmethod
    def _register_step_methods(module: torch.nn.Module) -> None:
        """Let ``training_step`` & co. gather the root's parameters, also when they never call ``self(...)``."""
        from torch.distributed.fsdp import register_fsdp_forward_method

        if getattr(module, "_accelplug_fsdp_methods", False):
            return
        for name in _STEP_METHODS:
            if callable(getattr(module, name, None)):
                register_fsdp_forward_method(module, name)
        object.__setattr__(module, "_accelplug_fsdp_methods", True)

    @staticmethod
    def _use_sharded_scaler(precision: NumericPrecision) -> None:
        """16-mixed: a scaler that agrees across ranks on skipping a step (each rank sees only its shard's infs)."""
        scaler = getattr(precision, "scaler", None)
        if scaler is None:
            return
        from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

        if not isinstance(scaler, ShardedGradScaler):
            precision.scaler = ShardedGradScaler(device=precision.device_type)  # type: ignore[attr-defined]

    @contextlib.contextmanager
    def no_gradient_sync(self, wrapped: torch.nn.Module | None) -> Iterator[None]:
        """Micro-batches that only accumulate keep their gradients unreduced (no reduce-scatter until the last)."""
        set_sync = getattr(wrapped, "set_requires_gradient_sync", None)
        if set_sync is None:
            yield
            return
        set_sync(False)
        try:
            yield
        finally:
            set_sync(True)

    # ---- checkpoints -----------------------------------------------------------------------------
    def _state_options(self) -> Any:
        from torch.distributed.checkpoint.state_dict import StateDictOptions

        if self.state_dict_type == "full":
            return StateDictOptions(full_state_dict=True, cpu_offload=True)
        return StateDictOptions()

    def module_state_dict(self, module: torch.nn.Module) -> dict[str, Any]:
        """Full: gathered on rank 0 (empty elsewhere), on the CPU. Sharded: this rank's DTensor shards."""
        from torch.distributed.checkpoint.state_dict import get_model_state_dict

        return get_model_state_dict(module, options=self._state_options())

    def optimizer_state_dict(self, module: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
        """Keyed by parameter name (torch.distributed.checkpoint's form), so it loads with or without FSDP."""
        from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

        return get_optimizer_state_dict(module, optimizer, options=self._state_options())

    def load_module_state_dict(self, module: torch.nn.Module, state: dict[str, Any], strict: bool = True) -> None:
        from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

        set_model_state_dict(module, state, options=StateDictOptions(full_state_dict=True, strict=strict))

    def load_optimizer_state_dict(
        self, module: torch.nn.Module, optimizer: torch.optim.Optimizer, state: dict[str, Any]
    ) -> None:
        from .state_dicts import keyed_by_name, load_named_optimizer_state, named_optimizer_state

        if not keyed_by_name(state):  # saved on one device or by DDP
            state = named_optimizer_state(module, optimizer, state)
        load_named_optimizer_state(module, optimizer, state)

    @property
    def restore_checkpoint_after_setup(self) -> bool:
        """True, as Lightning's FSDP: the full weights load into the sharded module."""
        return True

    def checkpoint_map_location(self) -> torch.device:
        return torch.device("cpu")  # the full model may not fit one device; shards are copied from the CPU

    def tensor_init_context(self, empty_init: bool | None = None) -> contextlib.AbstractContextManager[Any]:
        """As Lightning's FSDP: the precision's dtype, on the meta device with ``empty_init`` (shards get storage in
        :meth:`setup_module`), otherwise where torch puts tensors (sharding moves each shard to the device)."""
        return self.module_init_context(empty_init)

    def module_init_context(self, empty_init: bool | None = None) -> contextlib.AbstractContextManager[Any]:
        from .init_contexts import module_init_context

        return module_init_context(
            self.root_device, self.precision_plugin, sharded=True, empty_init=empty_init, module_hook=True
        )

    def save_checkpoint(
        self,
        checkpoint: Any = None,
        path: Any = None,
        write: Callable[[dict[str, Any], Path], object] | None = None,
        *,
        tensor_keys: tuple[str, ...] = ("state_dict", "optimizer_states"),
        **fabric_form: Any,
    ) -> None:
        refuse_storage_options(self, fabric_form.get("storage_options"))
        if write is None:  # Lightning Fabric's form: the states are gathered first, then come back with a writer
            super().save_checkpoint(checkpoint, path, write, **fabric_form)
        elif self.state_dict_type == "sharded":
            from .state_dicts import save_sharded

            save_sharded(self, checkpoint, path, write, tensor_keys=tensor_keys)
        else:
            super().save_checkpoint(checkpoint, path, write)


class _StorageOptions(MisconfigurationException, TypeError):
    """``storage_options`` given to a strategy without ``CheckpointIO`` (Lightning raises a ``TypeError``)."""


def refuse_storage_options(strategy: object, storage_options: object) -> None:
    """A sharding strategy saves through ``torch.distributed.checkpoint``, not a ``CheckpointIO`` that could take
    ``storage_options``: refused, with Lightning's type and words (the class named as Lightning names it)."""
    if storage_options is None:
        return
    name = type(strategy).__name__.removeprefix("Fabric")
    raise _StorageOptions(
        f"`{name}.save_checkpoint(..., storage_options=...)` is not supported because `{name}` does not use the "
        "`CheckpointIO`."
    )


# jsonargparse (LightningCLI) reads the signature: the annotation must be a typing object, not this module's string
# (``from __future__ import annotations``), so that ``--strategy.device_mesh=[1, 4]`` parses as a tuple.
FSDPStrategy.__init__.__annotations__["device_mesh"] = Union[tuple[int, int], ForwardRef("DeviceMesh"), None]  # noqa: UP007 - runtime typing: a ForwardRef has no |


def _materialize_meta(module: torch.nn.Module, device: torch.device) -> None:
    """Give parameters and buffers created on the meta device real (sharded) storage, then their initial values.

    torch's recipe for FSDP2: shard on the meta device, then ``to_empty`` on the target device (each rank
    allocates only its shards). The values come from each module's ``reset_parameters()``, run on a full-size
    copy of that module's own tensors (one module at a time) and scattered from rank 0, so every rank holds its
    part of one initialisation, as if the model had been built whole: running it on the shards themselves
    would draw the same numbers for every rank's part where DTensor has no distributed random generator
    (the CPU), leaving duplicated neurons that never differ.
    """
    from torch.distributed.tensor import DTensor, distribute_tensor

    tensors = [*module.parameters(), *module.buffers()]
    if not any(t.is_meta for t in tensors):
        return
    module.to_empty(device=device)
    uninitialised: list[str] = []
    with torch.no_grad():
        for sub in module.modules():
            reset = getattr(sub, "reset_parameters", None)
            if not callable(reset):
                owns = next(iter(sub.parameters(recurse=False)), None) is not None
                if owns or next(iter(sub.buffers(recurse=False)), None) is not None:
                    uninitialised.append(type(sub).__name__)
                continue
            own = {**dict(sub.named_parameters(recurse=False)), **dict(sub.named_buffers(recurse=False))}
            sharded = {name: t for name, t in own.items() if isinstance(t, DTensor)}
            for name, shard in sharded.items():  # a full-size stand-in for the reset to fill
                stand_in = torch.empty(shard.shape, dtype=shard.dtype, device=device)
                _swap(sub, name, torch.nn.Parameter(stand_in) if name in sub._parameters else stand_in)
            try:
                reset()
            finally:
                for name, shard in sharded.items():
                    full = getattr(sub, name)
                    part = distribute_tensor(full.detach(), shard.device_mesh, shard.placements)
                    shard.to_local().copy_(part.to_local())
                    _swap(sub, name, shard)
    if uninitialised:
        _warn_uninitialised(uninitialised)


def _warn_uninitialised(names: list[str]) -> None:
    """Lightning's warning (its key phrase), once, from rank 0: these modules' tensors hold ``to_empty``'s garbage."""
    from ..distributed.rank_zero import rank_zero_warn

    rank_zero_warn(
        "Parameter initialization incomplete. The following modules have parameters or buffers with uninitialized "
        "memory because they don't define a `reset_parameters()` method for re-initialization: "
        f"{', '.join(dict.fromkeys(names))}"
    )


def _swap(module: torch.nn.Module, name: str, value: torch.Tensor) -> None:
    if name in module._parameters:
        module._parameters[name] = value  # type: ignore[assignment]
    else:
        module._buffers[name] = value


_FABRIC_OPTIONS = (
    "accelerator",
    "parallel_devices",
    "cluster_environment",
    "precision",
    "activation_checkpointing_policy",
    "cpu_offload",
    "mixed_precision",
    "sharding_strategy",
    "state_dict_type",
    "device_mesh",
    "process_group_backend",
    "timeout",
)


class FabricFSDPStrategy(FSDPStrategy):
    """accelplug's FSDP2 strategy with Lightning Fabric's defaults: ``state_dict_type="sharded"``.

    Lightning Fabric's ``FSDPStrategy`` (``accelplug.fabric.strategies.FSDPStrategy`` is this class).

    Lightning's FSDP1 options ``use_orig_params=True`` and ``limit_all_gathers=True`` are accepted (FSDP2 always
    does what they ask), ``activation_checkpointing`` with Lightning's deprecation; any other option this strategy
    does not have is refused by name.
    """

    def __init__(self, auto_wrap_policy: Any = None, *, state_dict_type: str = "sharded", **options: Any) -> None:
        older = options.pop("activation_checkpointing", None)
        if older is not None:
            if options.get("activation_checkpointing_policy") is not None:  # both: the strategy refuses that
                options["activation_checkpointing"] = older
            else:
                warn_activation_checkpointing_deprecated(older, stacklevel=3)
                options["activation_checkpointing_policy"] = older
        # torch FSDP1 options Lightning passes through: the strategy accepts those FSDP2 always honours, explains others
        known = (*_FABRIC_OPTIONS, *_FSDP1_ONLY, "activation_checkpointing")
        unknown = [name for name in options if name not in known]
        if unknown:
            accepted = ["auto_wrap_policy", *_FABRIC_OPTIONS]
            raise MisconfigurationException(
                f"FSDPStrategy({unknown[0]}=...) is not an option of accelplug's FSDP strategy (torch FSDP2). "
                f"Accepted: {', '.join(accepted)}.{did_you_mean(unknown[0], accepted)}"
            )
        super().__init__(auto_wrap_policy=auto_wrap_policy, state_dict_type=state_dict_type, **options)
