"""``ModelParallelStrategy``: Lightning's 2D parallelism, a (data parallel x tensor parallel) device mesh.

The strategy brings up the process group and builds the mesh with torch's ``init_device_mesh``, dimensions
named ``"data_parallel"`` and ``"tensor_parallel"``; the module reads it as ``self.device_mesh`` in
``configure_model`` and applies tensor parallelism (``parallelize_module``) and ``fully_shard`` itself,
which is why a module without its own ``configure_model`` is refused. Everything after that is the FSDP2
strategy's machinery (meta parameters materialised, state dicts through ``torch.distributed.checkpoint``,
a sharded checkpoint folder when ``save_distributed_checkpoint``); data is split over the data-parallel
dimension only, so the processes of one tensor-parallel group read the same batches.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch.distributed.constants import default_pg_timeout

from ..errors import MisconfigurationException
from .fsdp import FSDPStrategy, refuse_storage_options

if TYPE_CHECKING:
    from ..accelerator import Accelerator
    from ..precision.base import NumericPrecision
    from .prepared import PreparedModule

__all__ = ["FabricModelParallelStrategy", "ModelParallelStrategy"]


class _NoConfigureModel(MisconfigurationException, TypeError):
    """Lightning raises a ``TypeError`` here; it is also accelplug's configuration error."""


class _FSDP1Module(MisconfigurationException, TypeError):
    """A module wrapped in torch's FSDP1 class (Lightning raises a ``TypeError``); also a configuration error."""


class _NotAModule(MisconfigurationException, TypeError):
    """``parallelize_fn`` returned something else than a module (Lightning raises a ``TypeError``)."""


class _MeshSizeMismatch(MisconfigurationException, RuntimeError):
    """Lightning raises a ``RuntimeError`` for mesh sizes that do not cover the world; also a configuration error."""


def _size(value: object, option: str) -> int | str:
    if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
        return value  # type: ignore[return-value]
    raise MisconfigurationException(
        f"ModelParallelStrategy({option}={value!r}) is invalid: expected 'auto' or an int >= 1 (processes)."
    )


class ModelParallelStrategy(FSDPStrategy):
    """A 2D mesh for the module's own ``configure_model`` (Lightning's arguments and defaults)."""

    name = "model_parallel"
    description = "a (data parallel x tensor parallel) device mesh the module parallelises itself over"

    def __init__(
        self,
        data_parallel_size: Any = "auto",
        tensor_parallel_size: Any = "auto",
        save_distributed_checkpoint: bool = True,
        process_group_backend: str | None = None,
        timeout: timedelta | None = default_pg_timeout,
    ) -> None:
        if not isinstance(save_distributed_checkpoint, bool):
            raise MisconfigurationException(
                f"ModelParallelStrategy(save_distributed_checkpoint={save_distributed_checkpoint!r}): expected a bool."
            )
        super().__init__(
            process_group_backend=process_group_backend,
            timeout=timeout,
            state_dict_type="sharded" if save_distributed_checkpoint else "full",
        )
        self._data_parallel_size = _size(data_parallel_size, "data_parallel_size")
        self._tensor_parallel_size = _size(tensor_parallel_size, "tensor_parallel_size")
        self._save_distributed_checkpoint = save_distributed_checkpoint
        self._device_mesh: Any = None

    def __repr__(self) -> str:
        return (
            f"ModelParallelStrategy(data_parallel_size={self._data_parallel_size!r}, "
            f"tensor_parallel_size={self._tensor_parallel_size!r}, "
            f"save_distributed_checkpoint={self._save_distributed_checkpoint})"
        )

    @property
    def device_mesh(self) -> Any:
        """The (data_parallel, tensor_parallel) ``DeviceMesh``; only once the processes are up."""
        if self._device_mesh is None:
            raise RuntimeError("Accessing the device mesh before processes have initialized is not allowed.")
        return self._device_mesh

    @device_mesh.setter
    def device_mesh(self, value: Any) -> None:
        if value is not None:  # FSDPStrategy's constructor writes its own option (None) here
            raise MisconfigurationException("ModelParallelStrategy builds its device mesh itself; it cannot be set.")

    @property
    def data_parallel_size(self) -> int | str:
        return self._data_parallel_size

    @property
    def tensor_parallel_size(self) -> int | str:
        return self._tensor_parallel_size

    @property
    def save_distributed_checkpoint(self) -> bool:
        return self._save_distributed_checkpoint

    @property
    def distributed_sampler_kwargs(self) -> dict[str, int]:
        """Each data-parallel replica reads its own share; a tensor-parallel group reads the same batches."""
        if self._device_mesh is None:
            return super().distributed_sampler_kwargs
        data_parallel = self._device_mesh["data_parallel"]
        return {"num_replicas": data_parallel.size(), "rank": data_parallel.get_local_rank()}

    def setup_environment(self, accelerator: Accelerator | None = None, device: torch.device | None = None) -> None:
        """The process group, then the mesh (``"auto"``: data parallel over nodes, tensor parallel within one)."""
        accelerator, device = self._environment_target(accelerator, device)
        import torch.distributed as dist
        from torch.distributed.device_mesh import init_device_mesh

        super().setup_environment(accelerator, device)
        world = dist.get_world_size()
        data = self._data_parallel_size if self._data_parallel_size != "auto" else self.num_nodes
        tensor = self._tensor_parallel_size if self._tensor_parallel_size != "auto" else world // int(data)
        if int(data) * int(tensor) != world:
            raise _MeshSizeMismatch(
                f"The sizes `data_parallel_size={data}` and `tensor_parallel_size={tensor}` multiplied should equal "
                f"the world size ({world})."
            )
        self._device_mesh = init_device_mesh(
            device.type, (int(data), int(tensor)), mesh_dim_names=("data_parallel", "tensor_parallel")
        )

    def setup_module(
        self,
        module: torch.nn.Module,
        precision: NumericPrecision,
        *,
        move_to_device: bool = True,
        compile_options: dict[str, Any] | None = None,
    ) -> PreparedModule:
        """FSDP1-wrapped modules refused (the mesh is for FSDP2's ``fully_shard`` and DTensor), the module
        parallelised where the strategy does it itself (Fabric's ``parallelize_fn``), then the FSDP strategy's
        preparation (meta tensors materialised)."""
        refuse_fsdp1(module, self._refusing_name)
        module = self._parallelized(module)
        return super().setup_module(module, precision, move_to_device=move_to_device, compile_options=compile_options)

    @property
    def _refusing_name(self) -> str:
        return type(self).__name__

    def _parallelized(self, module: torch.nn.Module) -> torch.nn.Module:
        """The Trainer's module parallelises itself in ``configure_model``: nothing to do here."""
        return module

    @contextlib.contextmanager
    def no_gradient_sync(self, wrapped: torch.nn.Module | None) -> Iterator[None]:
        """Every FSDP2 unit of the module keeps its gradients unreduced, also when the root itself is not one (the
        user's parallelisation chose which submodules to shard)."""
        from torch.distributed.fsdp import FSDPModule

        units = [m for m in (wrapped.modules() if wrapped is not None else ()) if isinstance(m, FSDPModule)]
        for unit in units:
            unit.set_requires_gradient_sync(False, recurse=False)
        try:
            yield
        finally:
            for unit in units:
                unit.set_requires_gradient_sync(True, recurse=False)

    def attach_module(self, module: torch.nn.Module) -> None:
        """Hand the mesh to the module before ``configure_model`` runs (it reads ``self.device_mesh``)."""
        if hasattr(module, "_device_mesh"):
            module._device_mesh = self._device_mesh

    def _shard(
        self, module: torch.nn.Module, precision: NumericPrecision, compiling: bool = False
    ) -> list[torch.nn.Module]:
        """Nothing to shard: ``configure_model`` parallelised the module itself (refused if it has none)."""
        from ..overrides import overrides

        if not overrides(module, "configure_model"):
            raise _NoConfigureModel(
                f"When using the {type(self).__name__}, you are required to override the `configure_model()` hook "
                "in the LightningModule and apply parallelization there."
            )
        return []


class _NoState(MisconfigurationException, ValueError):
    """A checkpoint call without what it needs (Lightning raises a ``ValueError``)."""


def _is_distributed(module: object) -> bool:
    from torch.distributed.tensor import DTensor

    return isinstance(module, torch.nn.Module) and any(isinstance(p, DTensor) for p in module.parameters())


def _one_distributed_module(state: dict[str, Any]) -> None:
    """Exactly one module of ``state`` holds DTensor parameters (Lightning's checkpoints hold one such model)."""
    found = [obj for obj in state.values() if _is_distributed(obj)]
    if not found:
        raise _NoState(
            "Could not find a distributed model in the provided checkpoint state. Pass the model set up by "
            "fabric.setup(...) as part of the state: `save_checkpoint(..., state={'model': model, ...})`."
        )
    if len(found) > 1:
        raise _NoState(
            "Found multiple distributed models in the given state. A checkpoint of this strategy holds one "
            "distributed model; save each model to its own path."
        )


def _reshard(state: object) -> None:
    """Put the FSDP2 units of the state's modules back into their sharded parameters: after a forward without
    backward a root unit keeps its gathered ones registered, which are not the tensors its optimizer steps."""
    from torch.distributed.fsdp import FSDPModule

    objects = state.values() if isinstance(state, dict) else [state]
    for obj in objects:
        if isinstance(obj, torch.nn.Module):
            for sub in obj.modules():
                if isinstance(sub, FSDPModule):
                    sub.reshard()


def refuse_fsdp1(module: torch.nn.Module, owner: str) -> None:
    """A module holding torch's FSDP1 wrapper cannot go on a 2D mesh (Lightning's ``TypeError`` and key phrase)."""
    from torch.distributed.fsdp import FullyShardedDataParallel

    if any(isinstance(sub, FullyShardedDataParallel) for sub in module.modules()):
        raise _FSDP1Module(
            "Found modules that are wrapped with `torch.distributed.fsdp.FullyShardedDataParallel`. "
            f"The `{owner}` only supports the new FSDP2 APIs in PyTorch >= 2.4: shard with "
            "`torch.distributed.fsdp.fully_shard` instead."
        )


class FabricModelParallelStrategy(ModelParallelStrategy):
    """Lightning Fabric's ``ModelParallelStrategy``: ``parallelize_fn(module, device_mesh)`` parallelises the module.

    Fabric has no ``configure_model``; the user's function receives the module and the strategy's 2D mesh
    (``"data_parallel"``, ``"tensor_parallel"``) in ``fabric.setup`` and returns the module to train, having
    applied ``parallelize_module`` and/or ``fully_shard``. Checkpoints: shards saved by every process with
    ``torch.distributed.checkpoint`` (``save_distributed_checkpoint=True``), or one file gathered on rank 0.
    """

    def __init__(
        self,
        parallelize_fn: Callable[[Any, Any], Any],
        data_parallel_size: Any = "auto",
        tensor_parallel_size: Any = "auto",
        save_distributed_checkpoint: bool = True,
        process_group_backend: str | None = None,
        timeout: timedelta | None = default_pg_timeout,
    ) -> None:
        if not callable(parallelize_fn):
            raise MisconfigurationException(
                f"ModelParallelStrategy(parallelize_fn={parallelize_fn!r}): expected a function (module, device_mesh) "
                "-> module that applies tensor parallelism and/or fully_shard."
            )
        super().__init__(
            data_parallel_size=data_parallel_size,
            tensor_parallel_size=tensor_parallel_size,
            save_distributed_checkpoint=save_distributed_checkpoint,
            process_group_backend=process_group_backend,
            timeout=timeout,
        )
        self._parallelize_fn = parallelize_fn

    @property
    def parallelize_fn(self) -> Callable[[Any, Any], Any]:
        return self._parallelize_fn

    @property
    def _refusing_name(self) -> str:
        return "ModelParallelStrategy"  # Lightning Fabric's class name, which its users know

    def _parallelized(self, module: torch.nn.Module) -> torch.nn.Module:
        """``parallelize_fn(module, device_mesh)``, once per module (a module set up again is already parallel)."""
        if getattr(module, "_accelplug_shard_units", None) is not None:
            return module
        parallel = self._parallelize_fn(module, self.device_mesh)
        if not isinstance(parallel, torch.nn.Module):
            raise _NotAModule(
                f"The `parallelize_fn` must return a `nn.Module` instance, but got: {type(parallel).__name__}"
            )
        return parallel

    def _shard(
        self, module: torch.nn.Module, precision: NumericPrecision, compiling: bool = False
    ) -> list[torch.nn.Module]:
        """Nothing to shard: ``parallelize_fn`` did it."""
        return []

    def save_checkpoint(
        self,
        checkpoint: Any = None,
        path: Any = None,
        write: Callable[[dict[str, Any], Path], object] | None = None,
        *,
        tensor_keys: tuple[str, ...] = ("state_dict", "optimizer_states"),
        **fabric_form: Any,
    ) -> None:
        """Fabric's call (``fabric.save``) checked as Lightning checks it: no ``storage_options`` (no
        ``CheckpointIO`` here), exactly one distributed module in the state, and no existing folder where one
        file is written; then the FSDP strategy's saving (shards with ``torch.distributed.checkpoint``, or one file)."""
        refuse_storage_options(self, fabric_form.get("storage_options"))
        if write is None:
            state = fabric_form.get("state", path)
            target = fabric_form.get("path", checkpoint if "state" not in fabric_form else path)
            if not self._save_distributed_checkpoint and target is not None and Path(target).is_dir():
                raise IsADirectoryError(f"The checkpoint path exists and is a directory: {target}")
            _one_distributed_module(state if isinstance(state, dict) else {})
            _reshard(state)
        super().save_checkpoint(checkpoint, path, write, tensor_keys=tensor_keys, **fabric_form)

    def load_checkpoint(
        self,
        path: str | os.PathLike[str],
        state: dict[str, Any] | torch.nn.Module | torch.optim.Optimizer | None = None,
        strict: bool = True,
        weights_only: bool | None = None,
    ) -> dict[str, Any]:
        """Fabric's ``fabric.load``/``load_raw``: a state holding the distributed module is required (its
        shards are loaded into it); a lone optimizer's raw state is not supported, as in Lightning."""
        name = "ModelParallelStrategy"
        if not state:
            raise _NoState(
                f"Got {name}.load_checkpoint(..., state={state!r}) but a state with at least a model instance to "
                f"reload is required. Pass it in like so: {name}.load_checkpoint(..., state={{'model': model, ...}})"
            )
        if isinstance(state, torch.optim.Optimizer):
            raise NotImplementedError(
                f"Loading a single optimizer object from a checkpoint is not supported yet with {name}."
            )
        if Path(path).is_dir():
            if isinstance(state, torch.nn.Module):
                raise _NoState(
                    f"The given path must be a single file containing the full state dict: {path}; {name} loads a "
                    "raw module state from one file only."
                )
            raise _NoState(
                f"The path {str(path)!r} does not point to a valid checkpoint: expected the file "
                "`fabric.save(path, ...)` wrote (a folder is not one)."
            )
        if isinstance(state, dict):
            _one_distributed_module(state)
        _reshard(state)
        return super().load_checkpoint(path, state, strict, weights_only)
