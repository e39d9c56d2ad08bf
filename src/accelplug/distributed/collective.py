"""Lightning Fabric's collectives: an object that owns a process group and runs collective operations on it.

``Collective`` is the interface (Lightning's experimental ``lightning.fabric.plugins.collectives``);
``TorchCollective`` runs on ``torch.distributed`` (``setup()`` starts the default process group when none is
running, ``create_group()`` makes the collective's own group, ``teardown()`` ends it, and the default group too when
this class started it and nothing else is left); ``SingleDeviceCollective`` is the same interface for one process,
where every operation returns its input. A reduction is named by a string (``"sum"``, ``"max"``...) or a
``torch.distributed.ReduceOp``.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
import torch.distributed as dist
from torch import Tensor

__all__ = ["Collective", "SingleDeviceCollective", "TorchCollective"]


class Collective(ABC):
    """Collective operations between processes, over the group this object owns."""

    def __init__(self) -> None:
        self._group: Any = None

    @property
    @abstractmethod
    def rank(self) -> int: ...

    @property
    @abstractmethod
    def world_size(self) -> int: ...

    @property
    def group(self) -> Any:
        if self._group is None:
            raise RuntimeError(
                f"`{type(self).__name__}` does not own a group. HINT: try `collective.create_group().group`"
            )
        return self._group

    @abstractmethod
    def broadcast(self, tensor: Tensor, src: int) -> Tensor: ...
    @abstractmethod
    def all_reduce(self, tensor: Tensor, op: Any = "sum") -> Tensor: ...
    @abstractmethod
    def reduce(self, tensor: Tensor, dst: int, op: Any = "sum") -> Tensor: ...
    @abstractmethod
    def all_gather(self, tensor_list: list[Tensor], tensor: Tensor) -> list[Tensor]: ...
    @abstractmethod
    def gather(self, tensor: Tensor, gather_list: list[Tensor], dst: int = 0) -> list[Tensor]: ...
    @abstractmethod
    def scatter(self, tensor: Tensor, scatter_list: list[Tensor], src: int = 0) -> Tensor: ...
    @abstractmethod
    def reduce_scatter(self, output: Tensor, input_list: list[Tensor], op: Any = "sum") -> Tensor: ...
    @abstractmethod
    def all_to_all(self, output_tensor_list: list[Tensor], input_tensor_list: list[Tensor]) -> list[Tensor]: ...
    @abstractmethod
    def send(self, tensor: Tensor, dst: int, tag: int = 0) -> None: ...
    @abstractmethod
    def recv(self, tensor: Tensor, src: int | None = None, tag: int = 0) -> Tensor: ...
    @abstractmethod
    def barrier(self, device_ids: list[int] | None = None) -> None: ...

    @classmethod
    @abstractmethod
    def is_available(cls) -> bool: ...
    @classmethod
    @abstractmethod
    def is_initialized(cls) -> bool: ...
    @classmethod
    @abstractmethod
    def init_group(cls, **kwargs: Any) -> None: ...
    @classmethod
    @abstractmethod
    def new_group(cls, **kwargs: Any) -> Any: ...
    @classmethod
    @abstractmethod
    def destroy_group(cls, group: Any) -> None: ...

    def setup(self, **kwargs: Any) -> Collective:
        """Start the default group (``kwargs`` go to ``init_group``) unless one is running."""
        if not self.is_initialized():
            self.init_group(**kwargs)
        return self

    def create_group(self, **kwargs: Any) -> Collective:
        """Make this collective's own group (the default group must be running)."""
        if self._group is not None:
            raise RuntimeError(f"`{type(self).__name__}` already owns a group.")
        self._group = self.new_group(**kwargs)
        return self

    def teardown(self) -> Collective:
        """End this collective's group."""
        if self._group is None:
            raise RuntimeError(f"`{type(self).__name__}` does not own a group to destroy.")
        self.destroy_group(self._group)
        self._group = None
        return self


def native_op(op: Any) -> Any:
    """A ``torch.distributed.ReduceOp`` for a name (``"sum"``, ``"avg"``...) or an op given as one."""
    if isinstance(op, (dist.ReduceOp, dist.ReduceOp.RedOpType)):
        return op
    if not isinstance(op, str):
        raise ValueError(f"Unsupported op {op!r} of type {type(op).__name__}")
    value = getattr(dist.ReduceOp, op.upper(), None)
    if value is None:
        raise ValueError(f"op {op.upper()!r} is not a member of `ReduceOp`")
    return value


@contextmanager
def _address(main_address: str | None, main_port: str | int | None) -> Iterator[None]:
    """``MASTER_ADDR``/``MASTER_PORT`` set from the arguments where not set already, for the group's start only."""
    added = []
    for key, value in (("MASTER_ADDR", main_address), ("MASTER_PORT", main_port)):
        if value is not None and key not in os.environ:
            os.environ[key] = str(value)
            added.append(key)
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


class TorchCollective(Collective):
    """Collectives on ``torch.distributed``; the group is the default (world) group until ``create_group()``."""

    #: whether an instance started the default process group (then the last teardown ends it)
    manages_default_group = False

    def __init__(self) -> None:
        if not dist.is_available():
            raise RuntimeError("Torch distributed is not available.")
        super().__init__()

    @property
    def group(self) -> Any:
        if self._group is None:
            self._group = dist.GroupMember.WORLD
        return super().group

    @property
    def rank(self) -> int:
        return dist.get_rank(self.group)

    @property
    def world_size(self) -> int:
        return dist.get_world_size(self.group)

    def broadcast(self, tensor: Tensor, src: int) -> Tensor:
        dist.broadcast(tensor, src, group=self.group)
        return tensor

    def all_reduce(self, tensor: Tensor, op: Any = "sum") -> Tensor:
        dist.all_reduce(tensor, op=native_op(op), group=self.group)
        return tensor

    def reduce(self, tensor: Tensor, dst: int, op: Any = "sum") -> Tensor:
        dist.reduce(tensor, dst, op=native_op(op), group=self.group)
        return tensor

    def all_gather(self, tensor_list: list[Tensor], tensor: Tensor) -> list[Tensor]:
        dist.all_gather(tensor_list, tensor, group=self.group)
        return tensor_list

    def gather(self, tensor: Tensor, gather_list: list[Tensor], dst: int = 0) -> list[Tensor]:
        dist.gather(tensor, gather_list, dst, group=self.group)
        return gather_list

    def scatter(self, tensor: Tensor, scatter_list: list[Tensor], src: int = 0) -> Tensor:
        dist.scatter(tensor, scatter_list, src, group=self.group)
        return tensor

    def reduce_scatter(self, output: Tensor, input_list: list[Tensor], op: Any = "sum") -> Tensor:
        dist.reduce_scatter(output, input_list, op=native_op(op), group=self.group)
        return output

    def all_to_all(self, output_tensor_list: list[Tensor], input_tensor_list: list[Tensor]) -> list[Tensor]:
        dist.all_to_all(output_tensor_list, input_tensor_list, group=self.group)
        return output_tensor_list

    def send(self, tensor: Tensor, dst: int, tag: int = 0) -> None:
        dist.send(tensor, dst, tag=tag, group=self.group)

    def recv(self, tensor: Tensor, src: int | None = None, tag: int = 0) -> Tensor:
        dist.recv(tensor, src, tag=tag, group=self.group)
        return tensor

    def all_gather_object(self, object_list: list[Any], obj: Any) -> list[Any]:
        dist.all_gather_object(object_list, obj, group=self.group)
        return object_list

    def broadcast_object_list(self, object_list: list[Any], src: int, device: torch.device | None = None) -> list[Any]:
        dist.broadcast_object_list(object_list, src, group=self.group, device=device)
        return object_list

    def gather_object(self, obj: Any, object_gather_list: list[Any], dst: int = 0) -> list[Any]:
        dist.gather_object(obj, object_gather_list, dst, group=self.group)
        return object_gather_list

    def scatter_object_list(
        self, scatter_object_output_list: list[Any], scatter_object_input_list: list[Any], src: int = 0
    ) -> list[Any]:
        dist.scatter_object_list(scatter_object_output_list, scatter_object_input_list, src, group=self.group)
        return scatter_object_output_list

    def barrier(self, device_ids: list[int] | None = None) -> None:
        if self.group == dist.GroupMember.NON_GROUP_MEMBER:
            return
        dist.barrier(group=self.group, device_ids=device_ids)

    def monitored_barrier(self, timeout: Any = None, wait_all_ranks: bool = False) -> None:
        dist.monitored_barrier(group=self.group, timeout=timeout, wait_all_ranks=wait_all_ranks)

    def setup(self, main_address: str | None = None, main_port: str | None = None, **kwargs: Any) -> TorchCollective:
        """Start the default process group (``kwargs``: ``init_process_group``'s) unless one runs, at
        ``main_address:main_port`` where ``MASTER_ADDR``/``MASTER_PORT`` are not set."""
        if self.is_initialized():
            return self
        with _address(main_address, main_port):
            super().setup(**kwargs)
        TorchCollective.manages_default_group = True
        return self

    def teardown(self) -> TorchCollective:
        """End this collective's group, and the default group when this class started it and it is the last."""
        member = self.group != dist.GroupMember.NON_GROUP_MEMBER
        super().teardown()
        world = dist.GroupMember.WORLD
        if member and TorchCollective.manages_default_group and world is not None:
            if len(dist.distributed_c10d._pg_map) == 1:
                self.destroy_group(world)
                TorchCollective.manages_default_group = False
        elif TorchCollective.manages_default_group and world is None:
            TorchCollective.manages_default_group = False
        return self

    @classmethod
    def is_available(cls) -> bool:
        return dist.is_available()

    @classmethod
    def is_initialized(cls) -> bool:
        return cls.is_available() and dist.is_initialized()

    @classmethod
    def init_group(cls, **kwargs: Any) -> None:
        dist.init_process_group(**kwargs)

    @classmethod
    def new_group(cls, **kwargs: Any) -> Any:
        return dist.new_group(**kwargs)

    @classmethod
    def destroy_group(cls, group: Any) -> None:
        if group in dist.distributed_c10d._pg_map:  # a process outside the group holds a placeholder object
            dist.destroy_process_group(group)


class SingleDeviceCollective(Collective):
    """The collective interface for one process: rank 0 of 1, and every operation returns its input."""

    @property
    def rank(self) -> int:
        return 0

    @property
    def world_size(self) -> int:
        return 1

    def broadcast(self, tensor: Tensor, *_: Any, **__: Any) -> Tensor:
        return tensor

    def all_reduce(self, tensor: Tensor, *_: Any, **__: Any) -> Tensor:
        return tensor

    def reduce(self, tensor: Tensor, *_: Any, **__: Any) -> Tensor:
        return tensor

    def all_gather(self, tensor_list: list[Tensor], tensor: Tensor, **__: Any) -> list[Tensor]:
        return [tensor]

    def gather(self, tensor: Tensor, *_: Any, **__: Any) -> list[Tensor]:
        return [tensor]

    def scatter(self, tensor: Tensor, scatter_list: list[Tensor], *_: Any, **__: Any) -> Tensor:
        return scatter_list[0]

    def reduce_scatter(self, output: Tensor, input_list: list[Tensor], *_: Any, **__: Any) -> Tensor:
        return input_list[0]

    def all_to_all(
        self, output_tensor_list: list[Tensor], input_tensor_list: list[Tensor], *_: Any, **__: Any
    ) -> list[Tensor]:
        return input_tensor_list

    def send(self, *_: Any, **__: Any) -> None:
        return None

    def recv(self, tensor: Tensor, *_: Any, **__: Any) -> Tensor:
        return tensor

    def barrier(self, *_: Any, **__: Any) -> None:
        return None

    @classmethod
    def is_available(cls) -> bool:
        return True

    @classmethod
    def is_initialized(cls) -> bool:
        return True

    @classmethod
    def init_group(cls, **_: Any) -> None:
        return None

    @classmethod
    def new_group(cls, **_: Any) -> Any:
        return object()

    @classmethod
    def destroy_group(cls, group: Any) -> None:
        return None
