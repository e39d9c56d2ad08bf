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

from datetime import timedelta
from typing import TYPE_CHECKING, Any

import torch
from torch.distributed.constants import default_pg_timeout

from ..errors import MisconfigurationException
from .fsdp import FSDPStrategy

if TYPE_CHECKING:
    from ..accelerator import Accelerator
    from ..precision.base import NumericPrecision

__all__ = ["ModelParallelStrategy"]


class _NoConfigureModel(MisconfigurationException, TypeError):
    """Lightning raises a ``TypeError`` here; it is also accelplug's configuration error."""


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
